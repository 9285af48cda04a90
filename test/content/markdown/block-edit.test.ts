import t from 'tap'
import { renderMarkdown, applyBlockEdit, SourceMismatchError, UneditableBlockError, sourceHash } from '../../../lib/content/markdown/index.js'

const hints = (body: string): string[] => [...renderMarkdown(body, { collection: 'c', id: 'i' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)
const edit = (body: string, block: number, html: string): string => {
  const src = hints(body)[block]
  if (src === undefined) throw new Error(`no block ${block}`)
  return applyBlockEdit({ body, src, html }).body
}

t.test('only the block range changes; the result reports the new range', async t => {
  const body = 'First  paragraph,   odd spacing.\n\nSecond *one*.\n\nThird.\n'
  const src = hints(body)[1] as string
  const r = applyBlockEdit({ body, src, html: 'Second <em>one</em>, edited.' })
  t.equal(r.body, 'First  paragraph,   odd spacing.\n\nSecond *one*, edited.\n\nThird.\n')
  t.same([r.start, r.end, r.changed], [34, 55, true])
  t.equal(r.body.slice(r.start, r.end), 'Second *one*, edited.')
})

t.test('a no-op edit leaves the body byte-identical, whatever the serialization', async t => {
  const body = 'Some  *prose*\nover   lines &amp; an entity &copy;.  \nHard break, `code`, [l](/x "T").\n\n## Head ##\n\n* a\n* b\n'
  for (const [i, html] of [
    [0, 'Some  <em>prose</em>\nover   lines &amp; an entity ©.<br>\nHard break, <code>code</code>, <a href="/x" title="T">l</a>.'],
    [0, 'Some <em>prose</em> over lines &#x26; an entity &#169;.<br>Hard break, <code>code</code>, <a href="/x">l</a>.'],
    [1, 'Head'], [2, 'a'], [3, ' b ']
  ] as const) {
    const r = applyBlockEdit({ body, src: hints(body)[i] as string, html })
    t.equal(r.body, body, html)
    t.equal(r.changed, false)
  }
})

t.test('headings keep depth and style', async t => {
  t.equal(edit('## Title ##\n\npara\n', 0, 'New <b>title</b> #'), '## New **title** \\# ##\n\npara\n')
  t.equal(edit('#### Deep\n', 0, 'Deeper'), '#### Deeper\n')
  t.equal(edit('Title\n-----\n\npara\n', 0, 'New <i>title</i>'), 'New *title*\n-----\n\npara\n')
  t.equal(edit('Title\n=====\n', 0, 'Big'), 'Big\n=====\n')
  t.equal(edit('## h\n', 0, 'a<br>---'), '## a ---\n', 'a line break cannot live in an ATX heading')
  t.equal(edit('para\n', 0, 'x <code>  </code> y <code></code>'), 'x y\n', 'empty code spans are not written as backticks')
})

t.test('list items keep marker, number, indentation and checkbox', async t => {
  t.equal(edit('* one\n* [x] two\n', 1, '<input type=checkbox checked disabled> done <s>x</s>'), '* one\n* [x] done ~~x~~\n')
  t.equal(edit('  3. one\n  4. two\n', 1, 'second<br>line'), '  3. one\n  4. second\\\n     line\n')
  t.equal(edit('- a\n- b\n  - nested\n', 2, 'nested <em>edit</em>'), '- a\n- b\n  - nested *edit*\n')
  t.equal(edit('- a\n- b\n  - nested\n', 1, 'bee'), '- a\n- bee\n  - nested\n')
  t.equal(edit('+ loose\n\n+ items\n', 1, '\n<p>items!</p>\n'), '+ loose\n\n+ items!\n')
})

t.test('blockquotes keep their prefix on every line', async t => {
  t.equal(edit('> quoted\n> text\n', 0, '<p>new<br>lines</p>'), '> new\\\n> lines\n')
  t.equal(edit('> a\n>\n> b\n', 1, 'bee'), '> a\n>\n> bee\n')
})

t.test('typed text that looks like syntax is escaped so the block keeps its kind', async t => {
  const cases: Array<[string, string]> = [
    ['# not a heading', '\\# not a heading'], ['> not a quote', '\\> not a quote'], ['- not an item', '\\- not an item'],
    ['+ nor this', '\\+ nor this'], ['* nor this', '\\* nor this'], ['1. nor this', '1\\. nor this'],
    ['a *literal* star_x_', 'a \\*literal\\* star_x\\_'], ['[not](a link)', '\\[not]\\(a link)'], ['&lt;b&gt;', '\\<b>'],
    ['a<br>- b', 'a\\\n\\- b']
  ]
  for (const [html, md] of cases) {
    const out = edit('para\n', 0, html)
    t.equal(out, md + '\n', html)
    // and it renders as the typed text, in a paragraph
    t.match(renderMarkdown(out, { collection: 'c', id: 'i' }), /^<div[^>]*><p /, html)
  }
  t.equal(edit('- item\n', 0, '1. x'), '- 1\\. x\n')
})

t.test('the document style is preferred', async t => {
  t.equal(edit('A _b_ c __d__\n\nother\n', 1, 'x <em>e</em> <strong>s</strong>'), 'A _b_ c __d__\n\nx _e_ __s__\n')
  t.equal(edit('A *b* c\n\nother\n', 1, 'x <em>e</em>'), 'A *b* c\n\nx *e*\n')
  t.equal(edit('Has _u_\n\nunfriggin\n', 1, 'un<em>frig</em>gin!'), 'Has _u_\n\nun*frig*gin!\n', 'intraword needs *')
  t.equal(edit('Has _u_\n\nun<i>frig</i>gin\n', 1, 'un<em>frig</em>gin!'), 'Has _u_\n\nun<i>frig</i>gin!\n', 'inline HTML the edit did not touch is kept')
  t.equal(edit('[a][r] x\n\n[r]: http://r "T"\n', 0, '<a href="http://r">a</a> y'), '[a][r] y\n\n[r]: http://r "T"\n')
  t.equal(edit('[a] x\n\n[a]: http://r\n', 0, '<a href="http://r">a</a> y <a href="http://r">b</a>'), '[a] y [b][a]\n\n[a]: http://r\n')
  t.equal(edit('[t](http://t "Title") x\n', 0, '<a href="http://t">t</a> y'), '[t](http://t "Title") y\n', 'title kept')
  t.equal(edit('x\n', 0, '<a href="http://n">n</a> <code>a`b</code> <del>d</del>'), '[n](http://n) ``a`b`` ~~d~~\n')
})

t.test('hostile HTML is reduced to the allowlist before conversion', async t => {
  t.equal(edit('para\n', 0, '<a href="JaVaScRiPt&colon;alert(1)">click</a> <img src=x onerror=alert(1)><script>alert(2)</script> ok'), 'click ![](x) ok\n')
  t.equal(edit('para\n', 0, '<img src="javascript:alert(1)" alt="a"><img src="data:image/png,x"> <abbr title="&quot;><script>x</script>">A</abbr>'), '<abbr title="&#34;&#62;&#60;script&#62;x&#60;/script&#62;">A</abbr>\n')
  t.equal(edit('para\n', 0, '<noscript><p title="</noscript><img src=x onerror=alert(1)>">x'), 'x\n')
})

t.test('CRLF bodies keep CRLF and non-ASCII offsets hold', async t => {
  const body = 'Ünïcødé 😀\r\n\r\n- a\r\n- b\r\n'
  t.equal(edit(body, 2, 'b<br>c'), 'Ünïcødé 😀\r\n\r\n- a\r\n- b\\\r\n  c\r\n')
  t.equal(edit(body, 0, 'Ünïcødé 😀 ✓'), 'Ünïcødé 😀 ✓\r\n\r\n- a\r\n- b\r\n')
})

t.test('stale, forged and malformed hints are refused', async t => {
  const body = 'one\n\ntwo\n'
  const good = hints(body)[1] as string
  const [start, end] = good.split(':').map(Number) as [number, number]
  const forged = [
    `${start}:${end}:0000000000000000`, // wrong hash
    `${start}:${body.length + 5}:${sourceHash(body.slice(start))}`, // past the end
    `-1:${end}:${sourceHash(body.slice(0, end))}`, 'x:y:0123456789abcdef', `${start}:${end}`, '',
    `0:${end}:${sourceHash(body.slice(0, end))}`, // verifies, but names no block
    `${start + 1}:${end}:${sourceHash(body.slice(start + 1, end))}`
  ]
  for (const src of forged) t.throws(() => applyBlockEdit({ body, src, html: 'x' }), SourceMismatchError, src)
  t.throws(() => applyBlockEdit({ body: 'one\n\nTWO\n', src: good, html: 'x' }), SourceMismatchError, 'stale')
  t.equal(applyBlockEdit({ body, src: good, html: 'x' }).body, 'one\n\nx\n')
})

t.test('code, tables and rules accept only no-op edits', async t => {
  const body = '```js\nx()\n```\n\n---\n'
  t.equal(applyBlockEdit({ body, src: hints(body)[0] as string, html: 'x()\n' }).body, body)
  t.throws(() => applyBlockEdit({ body, src: hints(body)[0] as string, html: 'y()' }), UneditableBlockError)
  t.equal(applyBlockEdit({ body, src: hints(body)[1] as string, html: '' }).body, body)
  t.throws(() => applyBlockEdit({ body, src: hints(body)[1] as string, html: 'text' }), UneditableBlockError)
})
