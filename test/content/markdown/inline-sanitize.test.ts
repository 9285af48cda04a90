import t from 'tap'
import { toHtml } from 'hast-util-to-html'
import { sanitizeInlineHtml } from '../../../lib/content/markdown/index.js'

const clean = (html: string): string => toHtml(sanitizeInlineHtml(html))

t.test('keeps the inline allowlist and maps its synonyms', async t => {
  t.equal(clean('<strong>a</strong> <em>b</em> <code>c</code> <del>d</del> x<br>y'), '<strong>a</strong> <em>b</em> <code>c</code> <del>d</del> x<br>y')
  t.equal(clean('<b>a</b><i>b</i><s>c</s><strike>d</strike>'), '<strong>a</strong><em>b</em><del>c</del><del>d</del>')
  t.equal(clean('<a href="https://x.org/a?b=1" title="t" class="c" onclick="x()">l</a>'), '<a href="https://x.org/a?b=1">l</a>')
  t.equal(clean('<a href="/rel">r</a> <a href="mailto:a@b.c">m</a> <a href="#f">h</a> <a href="HTTP://UP.org">u</a>'),
    '<a href="/rel">r</a> <a href="mailto:a@b.c">m</a> <a href="#f">h</a> <a href="HTTP://UP.org">u</a>')
})

t.test('drops attributes, other elements (keeping their text), script and style content', async t => {
  t.equal(clean('<span style="color:red" class="x">kept</span> <div><p>para</p></div>'), 'kept para')
  t.equal(clean('<strong onmouseover="x()" style="a">s</strong>'), '<strong>s</strong>')
  t.equal(clean('a<script>alert(1)</script>b<style>p{}</style>c<template>t</template>'), 'abc')
  t.equal(clean('<img src=x onerror=alert(1)>ok<!-- comment -->'), '<img src="x">ok')
  t.equal(clean('<u>u</u><ins>i</ins><span title="t">s</span>'), 'uis')
})

t.test('hostile link targets lose the link but keep its text', async t => {
  const hostile = [
    'javascript:alert(1)', 'JaVaScRiPt&colon;alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)',
    'java&#x0A;script:alert(1)', '&#106;avascript:alert(1)', '\u0001javascript:alert(1)', 'data:text/html,<script>x</script>',
    'DATA:image/svg+xml,x', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'javascript&#58;alert(1)',
    '\\\\evil.example', '/\\evil.example'
  ]
  for (const href of hostile) {
    t.equal(clean(`<a href="${href}">text</a>`), 'text', href)
  }
  t.equal(clean('<a>no href</a>'), 'no href')
})

t.test('mXSS shapes do not survive fragment parsing', async t => {
  const cases = [
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    '<svg><script>alert(1)</script><a href="javascript:x">s</a></svg>',
    '<math><mi><style><img src=x onerror=alert(1)></style></mi></math>',
    '<svg><style><img src=x onerror=alert(1)></style></svg>',
    '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
    '<a href="http://a"><a href="javascript:x">nested</a></a>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>x',
    '<table><a href="javascript:x">t</a></table>'
  ]
  for (const html of cases) {
    const out = clean(html)
    t.notMatch(out, /<(?!\/?(a|strong|em|code|del|br|img|sup|sub|kbd|mark|abbr)\b)/i, `${html} -> ${out}`)
    t.notMatch(out, /javascript|onerror|srcdoc/i, `${html} -> ${out}`)
  }
  t.equal(clean('<a href="http://a"><a href="http://b">n</a></a>'), '<a href="http://a"></a><a href="http://b">n</a>', 'the parser splits nested links')
})

t.test('the grown allowlist: images with safe sources, sup, sub, kbd, mark, abbr, footnote references', async t => {
  t.equal(clean('<kbd>Ctrl</kbd>+<kbd>S</kbd> <sup>2</sup> <sub>i</sub> <mark class="x">m</mark> <abbr title="HyperText" id="y">HTML</abbr>'),
    '<kbd>Ctrl</kbd>+<kbd>S</kbd> <sup>2</sup> <sub>i</sub> <mark>m</mark> <abbr title="HyperText">HTML</abbr>')
  t.equal(clean('<img src="/a.png" alt="A" title="T" width="9" onload="x()"> <img src="https://x.org/b.png"> <img src="http://x.org/c">'),
    '<img src="/a.png" alt="A" title="T"> <img src="https://x.org/b.png"> <img src="http://x.org/c">')
  t.equal(clean('<sup><a href="#user-content-fn-note" id="user-content-fnref-note" data-footnote-ref aria-describedby="l">1</a></sup>'),
    '<sup><a href="#user-content-fn-note" data-footnote-ref>1</a></sup>')
  t.equal(clean('<a href="https://x.org" data-footnote-ref>x</a>'), '<a href="https://x.org">x</a>', 'only an in-page link is a footnote reference')
  for (const src of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' java\tscript:x', '&#106;avascript:x', 'data:image/png;base64,AAAA',
    'DATA:image/svg+xml,<svg onload=alert(1)>', 'vbscript:x', 'file:///etc/passwd', 'mailto:a@b.c']) {
    t.equal(clean(`a<img src="${src}" alt="x">b`), 'ab', src)
  }
  t.equal(clean('<img alt="no src">'), '')
  const hostile = clean('<abbr title="<script>alert(1)</script>" onmouseover="alert(2)">A</abbr><img src=x onerror=alert(1)>' +
    '<svg><p><style><img src=x onerror=alert(3)></style></p></svg><noscript><p title="</noscript><img src=x onerror=alert(4)>">')
  t.notMatch(hostile, /onerror|onmouseover|<style|<svg|<p|<noscript/i, hostile)
  t.equal(hostile, '<abbr title="<script>alert(1)</script>">A</abbr><img src="x">', 'the title is an attribute value (text), escaped where it is stored')
})
