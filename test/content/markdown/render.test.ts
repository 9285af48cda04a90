import t from 'tap'
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import remarkRehype from 'remark-rehype'
import rehypeStringify from 'rehype-stringify'
import { renderMarkdown, remarkCmsSource, rehypeCmsSource, sourceHash, parseSourceHint } from '../../../lib/content/markdown/index.js'

const opts = { collection: 'posts', id: 'hello' }
const hints = (html: string): string[] => [...html.matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)
const slices = (body: string, html: string): string[] => hints(html).map(h => {
  const p = parseSourceHint(h)
  if (p === null) throw new Error('bad hint ' + h)
  if (sourceHash(body.slice(p.start, p.end)) !== p.hash) throw new Error('hash mismatch ' + h)
  return body.slice(p.start, p.end)
})

t.test('wraps the document and stamps every top-level block with a verifiable hint', async t => {
  const body = '# Title\n\nA *para*\nover two lines.\n\n```js\nx()\n```\n\n---\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n> quoted\n'
  const html = renderMarkdown(body, opts)
  t.match(html, /^<div data-cms-md="posts\/hello#body">/)
  t.match(html, /<h1 data-cms-src="0:7:[0-9a-f]{16}">Title<\/h1>/)
  t.same(slices(body, html), ['# Title', 'A *para*\nover two lines.', '```js\nx()\n```', '---', '| a | b |\n| - | - |\n| 1 | 2 |', '> quoted'])
  t.match(renderMarkdown(body, { ...opts, blockPath: 'summary' }), /data-cms-md="posts\/hello#summary"/)
})

t.test('list items are blocks; an item with nested blocks hands its hint to them', async t => {
  const body = '- one\n- two\n  - nested *a*\n  - nested b\n- [ ] task\n\n1. first\n\n2. second\n\n   more\n'
  const html = renderMarkdown(body, opts)
  t.same(slices(body, html), ['one', 'two', 'nested *a*', 'nested b', '- [ ] task', '1. first', 'second', 'more'].map((s, i) => {
    // items holding one paragraph carry their whole item range (marker included)
    return [0, 2, 3, 4, 5].includes(i) ? (i === 0 ? '- one' : i === 2 ? '- nested *a*' : i === 3 ? '- nested b' : s) : s
  }))
  t.match(html, /<li data-cms-src="[^"]+">one<\/li>/, 'tight item carries its hint')
  t.match(html, /<li>\n<span data-cms-src="[^"]+">two<\/span>\n<ul>/, 'item with a nested list: its text is a span block')
  t.match(html, /<li data-cms-src="[^"]+">\n<p>first<\/p>\n<\/li>/, 'loose item carries its hint')
  t.match(html, /<li>\n<p data-cms-src="[^"]+">second<\/p>\n<p data-cms-src="[^"]+">more<\/p>\n<\/li>/)
})

t.test('offsets are JavaScript string indices, also with CRLF, tabs and astral characters', async t => {
  const body = '😀 é\r\n\r\n-\tCRLF *item*\r\n- two\r\n\r\n## 日本語\r\n'
  const html = renderMarkdown(body, opts)
  t.same(slices(body, html), ['😀 é', '-\tCRLF *item*', '- two', '## 日本語'])
})

t.test('raw HTML is sanitized unless allowDangerousHtml', async t => {
  const body = 'Hi <kbd>K</kbd> <img src=x onerror="alert(1)"> <a href="javascript:alert(1)">x</a>\n\n<script>alert(2)</script>\n\n<div onclick="x()" data-cms-src="0:1:0000000000000000">d</div>\n'
  const html = renderMarkdown(body, opts)
  t.notMatch(html, /onerror|onclick|<script|javascript:/i)
  t.match(html, /<kbd>K<\/kbd>/)
  t.match(html, /<div data-cms-md/)
  const raw = renderMarkdown(body, { ...opts, allowDangerousHtml: true })
  t.match(raw, /<script>alert\(2\)<\/script>/)
  t.match(raw, /onerror/)
})

t.test('footnote ids are prefixed once', async t => {
  const html = renderMarkdown('A[^1]\n\n[^1]: note\n', opts)
  t.match(html, /href="#user-content-fn-1"/)
  t.match(html, /id="user-content-fn-1"/)
  t.notMatch(html, /user-content-user-content/)
})

t.test('the plugin pair gives the same stamps in a site pipeline', async t => {
  const body = '# T\n\n- a\n- b\n\npara\n'
  const html = String(await unified().use(remarkParse).use(remarkGfm).use(remarkCmsSource).use(remarkRehype)
    .use(rehypeCmsSource, opts).use(rehypeStringify).process(body))
  t.same(hints(html), hints(renderMarkdown(body, opts)))
  t.match(html, /^<div data-cms-md="posts\/hello#body">/)
})

t.test('a body without raw HTML renders as the HTML parser would read it back', async t => {
  // The sanitizer runs on the rendered tree directly when the body has no raw HTML; a trailing
  // comment (dropped by the sanitizer, leaving a line break) sends the same body through the serialize-and-parse path.
  const { readCorpus } = await import('../../../bench/markdown-bench.js')
  const bodies = readCorpus().map(d => d.body).concat([
    '* [ ] task\n* [x] done\n',
    'One[^x].\n\nTwo[^y] and one again[^x].\n\n[^y]: Why.\n\nThree.\n\n[^x]: Ex[^y].\n',
    'Go [up](#fn-x).\n\nText[^x].\n\n[^x]: Note.\n',
    '[a [b](c) d](e)\n',
    'a  \nb\\\nc &amp; &copy; <http://x.y>\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n'
  ])
  for (const body of bodies) {
    const direct = renderMarkdown(body, opts)
    const parsed = renderMarkdown(body + '\n\n<!-- -->\n', opts).replace(/\n(?=\n<section data-footnotes|<\/div>$)/, '')
    t.equal(direct, parsed, JSON.stringify(body.slice(0, 40)))
  }
})

t.test('footnotes are numbered in document order; references resolve to the first definition, wherever it is', async t => {
  const notes = renderMarkdown('One[^x].\n\nTwo[^y] and one again[^x].\n\n[^y]: Why.\n\nThree.\n\n[^x]: Ex[^y].\n', opts)
  t.match(notes, /id="user-content-fnref-x-2"/)
  t.match(notes, /<section data-footnotes/)
  const later = renderMarkdown('See [the docs][d].\n\nOther.\n\n[d]: https://example.com/docs "Docs"\n\n[d]: https://example.com/second\n', opts)
  t.match(later, /<a href="https:\/\/example.com\/docs" title="Docs">the docs<\/a>/)
  t.match(renderMarkdown('Go [up](#top).\n\n<a id="top"></a>\n', opts), /href="#user-content-top"/)
})
