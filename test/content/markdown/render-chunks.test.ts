/**
 * renderMarkdownChunked gives renderMarkdown's HTML byte for byte, over the whole Markdown corpus,
 * over randomized edits that add, remove and change blocks, definitions, footnotes, raw HTML and
 * in-page links, and in the cases where a chunk depends on the rest of the document; and after a
 * save that changed one block it renders that block's chunk alone.
 */
import t, { type Test } from 'tap'
import { readCorpus } from '../../../bench/markdown-bench.js'
import { renderMarkdown } from '../../../lib/content/markdown/index.js'
import { renderMarkdownChunked, type ChunkedRender } from '../../../lib/content/markdown/render-chunks.js'
import { chunkEntryWeight, type ChunkCacheEntry } from '../../../lib/content/markdown/chunk-cache.js'
import { bodyChunks } from '../../../lib/content/markdown/body-chunks.js'
import { LRUCache } from 'lru-cache'

const opts = { collection: 'posts', id: 'p' }
const newCache = (): LRUCache<string, ChunkCacheEntry> => new LRUCache<string, ChunkCacheEntry>({ maxSize: 64 * 1024 * 1024, sizeCalculation: chunkEntryWeight })

/** Renders both ways and checks they agree; returns the chunked result. */
function same (t: Test, body: string, cache: LRUCache<string, ChunkCacheEntry>, name: string): ChunkedRender {
  const full = renderMarkdown(body, opts)
  const chunked = renderMarkdownChunked(body, opts, cache)
  if (chunked.html !== full) {
    let i = 0
    while (chunked.html[i] === full[i]) i++
    t.fail(`${name}: chunked differs from full at ${i}`, { found: chunked.html.slice(Math.max(0, i - 120), i + 120), wanted: full.slice(Math.max(0, i - 120), i + 120) })
  } else {
    t.pass(name)
  }
  return chunked
}

t.test('every corpus document: chunked equals full, cold and warm, without falling back', async t => {
  const cache = newCache()
  for (const doc of readCorpus()) {
    const cold = same(t, doc.body, cache, `${doc.name} cold`)
    t.equal(cold.fallback, undefined, `${doc.name} renders chunk-wise`)
    const warm = same(t, doc.body, cache, `${doc.name} warm`)
    t.equal(warm.rendered, 0, `${doc.name}: nothing rendered again`)
  }
})

/** A small deterministic PRNG (mulberry32). */
function prng (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6D2B79F5) | 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** Blocks the random edits insert: plain, and every kind that reaches across chunks. */
const BLOCKS = [
  'A plain paragraph with *emphasis* and `code`.',
  'See [the guide][guide] and [Guide] again.',
  '[guide]: https://example.com/guide "The guide"',
  '[GUIDE]: https://example.com/other',
  'A claim[^a], another[^b] and the first again[^a].',
  '[^a]: The note, with [the guide][guide] in it.',
  '[^b]: Another note[^a].\n\n    Its second paragraph.',
  'A late footnote[^late].',
  '[^late]: Defined at last.',
  'Inside the details, *Markdown*.',
  '<div align="center">\n<img src="logo.png" alt="logo">\n</div>',
  '<a id="top"></a>',
  'Back [to the top](#top), to [the note](#fn-a) and [its call](#fnref-a-2).',
  '- item one\n- item [two][guide]\n\n  more of two',
  '```js\nconst a = "[guide]: /fake"\n\n[^a]\n```',
  '> quoted [guide]\n> on two lines',
  '| a | b |\n| - | - |\n| [x][guide] | y[^b] |',
  '<!-- a comment\n\nover a blank line -->',
  'Text with <kbd>Ctrl</kbd> and <b>bold</b>',
  'Heading\n======='
]
/** Raw HTML opened in one block and closed some blocks later (the browser nests what is between). */
const PAIRS: Array<[string, string]> = [
  ['<details>\n<summary>More</summary>', '</details>'],
  ['<div class="note">', '</div>'],
  ['<table>\n<tr><td>', '</td></tr>\n</table>']
]

t.test('randomized edits: chunked equals full after each, with one cache throughout', async t => {
  const docs = readCorpus().filter(d => ['15-html-mixed.md', '19-blog-footnotes.md', '20-docs-reference-links.md'].includes(d.name))
  const random = prng(15)
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)] as T
  const cache = newCache()
  let body = docs.map(d => d.body).join('\n')
  let fallbacks = 0
  const steps = 80
  for (let step = 0; step < steps; step++) {
    const chunks = bodyChunks(body)
    const i = Math.floor(random() * chunks.length)
    const at = chunks[i] ?? { start: 0, end: 0 }
    const op = pick(['insert', 'insert', 'delete', 'change', 'append', 'wrap'])
    const block = pick(BLOCKS) + '\n\n'
    const end = chunks[Math.min(chunks.length - 1, i + Math.floor(random() * 3))]?.end ?? body.length
    // Raw HTML is deleted, changed or wrapped only as a whole: an element cut in half stays open
    // to the end of the body (rendered correctly, but whole: no test of the chunks).
    const html = body.slice(at.start, op === 'wrap' ? end : at.end).includes('<')
    if (op === 'insert') body = body.slice(0, at.start) + block + body.slice(at.start)
    else if (op === 'append') body = body + (body.endsWith('\n\n') ? '' : '\n\n') + block
    else if (html) { step--; continue }
    else if (op === 'wrap') {
      const [open, close] = pick(PAIRS)
      body = body.slice(0, at.start) + open + '\n\n' + body.slice(at.start, end).replace(/\n*$/, '\n\n') + close + '\n\n' + body.slice(end)
    } else if (op === 'delete') body = body.slice(0, at.start) + body.slice(at.end)
    else {
      const text = body.slice(at.start, at.end)
      const word = /[A-Za-z]{3,}/.exec(text)
      body = word === null ? body : body.slice(0, at.start + word.index) + 'changed' + body.slice(at.start + word.index + word[0].length)
    }
    const r = same(t, body, cache, `step ${step} (${op})`)
    if (r.fallback !== undefined) fallbacks++
  }
  t.ok(fallbacks < steps / 4, `${fallbacks} of ${steps} bodies rendered whole`)
})

t.test('a save that changes one paragraph of a 20 KB body renders that chunk alone', async t => {
  const lf = readCorpus().filter(d => !d.body.includes('\r\n')).map(d => d.body)
  let body = ''
  for (let i = 0; body.length < 20_000; i++) body += (lf[i % lf.length] ?? '') + '\n'
  const cache = newCache()
  same(t, body, cache, 'cold')
  for (let n = 1; n <= 3; n++) {
    body = body.replace(/\n\n[A-Z][^\n]{20,}\n\n/, `\n\nA paragraph edited ${n} times${'!'.repeat(n)}\n\n`)
    const r = same(t, body, cache, `edit ${n}`)
    t.equal(r.rendered, 1, 'one segment rendered')
    t.ok(r.segments > 100, `${r.segments} segments`)
  }
})

t.test('a definition added in a later chunk turns an earlier reference into a link', async t => {
  const cache = newCache()
  const before = 'Intro.\n\nSee [the docs][d].\n\nOther.\n'
  same(t, before, cache, 'undefined reference')
  const after = before + '\n[d]: https://example.com/docs "Docs"\n'
  const r = same(t, after, cache, 'defined later')
  t.match(r.html, /<a href="https:\/\/example.com\/docs" title="Docs">the docs<\/a>/)
  // The referring chunk, the new one, and the one before it (which now ends with a blank line).
  t.equal(r.rendered, 3, 'the chunks that changed or refer to the new definition')
  same(t, after + '\n[d]: https://example.com/second\n', cache, 'a second definition of the label loses')
  same(t, '[d]: https://example.com/first\n\n' + after, cache, 'an earlier one wins')
})

t.test('footnotes: numbering across chunks, reuse, the section and its back references', async t => {
  const cache = newCache()
  const body = 'One[^x].\n\nTwo[^y] and one again[^x].\n\n[^y]: Why.\n\nThree.\n\n[^x]: Ex[^y].\n'
  const r = same(t, body, cache, 'footnotes')
  t.match(r.html, /id="user-content-fnref-x-2"/)
  t.match(r.html, /<section data-footnotes/)
  const renumbered = same(t, 'Zero[^y].\n\n' + body, cache, 'a reference added before renumbers')
  t.ok(renumbered.rendered <= 3, `${renumbered.rendered} pieces rendered`)
  same(t, body.replace('Three.', 'Three[^z].\n\n[^z]: Zed.'), cache, 'a footnote added')
  same(t, body.replace('[^y]: Why.', '[^y]: Why <a id="why"></a>.') + '\n[to why](#why)\n', cache, 'a link to an id in the section')
})

t.test('raw HTML open across blank lines renders as one segment', async t => {
  const cache = newCache()
  const body = 'Intro.\n\n<details>\n<summary>More</summary>\n\nHidden *text*.\n\n</details>\n\nAfter.\n'
  const r = same(t, body, cache, 'details')
  t.ok(r.segments < bodyChunks(body).length, `${r.segments} segments for ${bodyChunks(body).length} chunks`)
  same(t, body.replace('Hidden', 'Shown'), cache, 'edit inside')
  same(t, body.replace('</details>', ''), cache, 'never closed')
  same(t, 'A<b>\n\nB\n\nC</b>\n', cache, 'a formatting element reopened')
  same(t, 'x\n\n<table>\n<tr><td>\n\nin cell\n\n</td></tr></table>\n\ny\n', cache, 'a table across chunks')
  same(t, 'x\n\n<div>\n\n</div></div>\n\nafter the wrapper\n', cache, 'a close tag for the wrapper')
  same(t, 'x <span title="a\n\nb">y</span>\n\nz\n', cache, 'an attribute over a blank line')
  // micromark reads `]]>` as pairs of `]`: `]]]>` does not end a CDATA section; the chunks agree.
  const cdata = 'x\n\n<![CDATA[\n\n]]]>\n\nstill inside\n\n]]]]>\n\nafter [a]\n\n[a]: /u\n'
  t.equal(same(t, cdata, cache, 'CDATA').fallback, undefined)
  same(t, cdata.replace('after', 'after, edited'), cache, 'CDATA, edited after')
})

t.test('in-page links follow the ids of the whole page', async t => {
  const cache = newCache()
  const link = 'Go [up](#top).\n\n'
  same(t, link + 'Text.\n', cache, 'no target')
  const r = same(t, link + '<a id="top"></a>\n', cache, 'target added later')
  t.match(r.html, /href="#user-content-top"/)
  same(t, link + 'Text.\n', cache, 'target gone again')
})

t.test('what cannot be rendered apart falls back to the whole body, with the same HTML', async t => {
  const cache = newCache()
  t.ok(same(t, '> [a]: /quoted\n\nSee [a].\n', cache, 'definition in a quote').fallback)
  t.ok(same(t, '- [a]: /listed\n\nSee [a].\n', cache, 'definition in a list').fallback)
  const trusted = renderMarkdownChunked('<script>x</script>\n', { ...opts, allowDangerousHtml: true }, cache)
  t.equal(trusted.html, renderMarkdown('<script>x</script>\n', { ...opts, allowDangerousHtml: true }))
  t.ok(trusted.fallback)
  t.ok(same(t, '\uFEFF[a] x\n\nMore[^1].\n\n[a]: /u\n\n[^1]: n\n', cache, 'a byte order mark').fallback)
  same(t, 'a\n\n\uFEFFb [a]\n\n[a]: /u\n', cache, 'a byte order mark inside')
  const deep = '>'.repeat(40) + ' deep\n'
  t.ok(same(t, deep, cache, 'too deep').fallback)
})

t.test('edge cases: empty, CRLF, authored hints and footnote attributes, ids, entities', async t => {
  const cache = newCache()
  same(t, '', cache, 'empty')
  same(t, '\n\n\n', cache, 'blank')
  same(t, '[a]: /only-a-definition\n', cache, 'only a definition')
  same(t, '# T\r\n\r\nPara [x][a].\r\n\r\n[a]: /u\r\n\r\n<div>\r\n\r\nx\r\n\r\n</div>\r\n', cache, 'CRLF')
  same(t, 'A <span data-cms-src="0:1:0000000000000000">forged</span> hint.\n\nB.\n', cache, 'authored hint')
  same(t, 'A <a href="#x" data-footnote-ref id="fnref-1">1</a>.\n\nB[^1].\n\n[^1]: n\n', cache, 'authored footnote attributes')
  same(t, 'Label [Straße][] and [STRASSE][] and [ΑΣ][].\n\n[strasse]: /s\n\n[ας]: /g\n', cache, 'case folding')
  same(t, 'Text &copy; &#x1F600; \u0000 end.\n\nNext.\n', cache, 'entities and NUL')
  same(t, '[a\nb]: /multi\n\n> see [a\n> b]\n', cache, 'a label over a line break in a quote')
  same(t, 'A [link [^1]](/u) and [<https://a.example>](/v).\n\n[^1]: x\r\n', cache, 'links in links, taken apart by the HTML parser')
  same(t, 'CRLF[^1]\r\nwrapped.\r\n\r\n[^1]: A note\r\n  over two lines.\r\n', cache, 'CRLF footnotes')
})
