import t from 'tap'
import { toHtml } from 'hast-util-to-html'
import { visit } from 'unist-util-visit'
import type { Element } from 'hast'
import { applyBlockEdit, renderMarkdown } from '../../../lib/content/markdown/index.js'
import { renderTree } from '../../../lib/content/markdown/render.js'

// CONTRACT 11: an md_block edit changes only the source bytes of the text that changed.

/** The served blocks of a body: hint and innerHTML, as the page has them. */
function served (body: string): Array<{ src: string, inner: string }> {
  const out: Array<{ src: string, inner: string }> = []
  visit(renderTree(body, { collection: 'c', id: 'i' }), 'element', (node: Element) => {
    if (typeof node.properties.dataCmsSrc === 'string') out.push({ src: node.properties.dataCmsSrc, inner: toHtml(node.children) })
  })
  return out
}

/** Edits block `i` of `body` by a function of its served innerHTML; returns the new body. */
function edit (body: string, i: number, change: (inner: string) => string): string {
  const block = served(body)[i]
  if (block === undefined) throw new Error(`no block ${i}`)
  const html = change(block.inner)
  if (html === block.inner) throw new Error('the change changes nothing')
  return applyBlockEdit({ body, src: block.src, html }).body
}

/** The rendered HTML of a body without its hints (they move with offsets). */
const page = (body: string): string => renderMarkdown(body, { collection: 'c', id: 'i' }).replace(/ data-cms-src="[^"]*"/g, '')

t.test('typed text is spliced between the bytes around it', async t => {
  const cases: Array<[string, string, string, string]> = [
    // [body, served text to find, replacement, expected body]
    ['A ![chart](/c.png "Chart") and a note.[^n] Done.\n\n[^n]: Note.\n', 'and a', 'and also a', 'A ![chart](/c.png "Chart") and also a note.[^n] Done.\n\n[^n]: Note.\n'],
    ['See [docs][d] and [spec](http://s.example "Spec") now.\n\n[d]: http://d.example "Docs"\n', 'now', 'right now', 'See [docs][d] and [spec](http://s.example "Spec") right now.\n\n[d]: http://d.example "Docs"\n'],
    ['Acme&trade; &copy;&nbsp;2024 &amp; co &mdash; all.\n', 'all', 'all rights', 'Acme&trade; &copy;&nbsp;2024 &amp; co &mdash; all rights.\n'],
    ['Press <kbd>Ctrl</kbd>+<kbd>S</kbd> to save.\n', 'to save', 'to save now', 'Press <kbd>Ctrl</kbd>+<kbd>S</kbd> to save now.\n'],
    ['Run `` `npm test` `` and ` a ` here.\n', 'here', 'right here', 'Run `` `npm test` `` and ` a ` right here.\n'],
    ['Write \\*stars\\* and a\\_b, then go.\n', 'then go', 'then stop', 'Write \\*stars\\* and a\\_b, then stop.\n'],
    ['Line one is here\nline two is here\nline three ends.\n', 'line two', 'line 2', 'Line one is here\nline 2 is here\nline three ends.\n'],
    ['### Closing sequence ###\n', 'Closing', 'A closing', '### A closing sequence ###\n'],
    ['Visit https://x.example or <https://y.example> today.\n', 'today', 'this week', 'Visit https://x.example or <https://y.example> this week.\n'],
    ['*Emphasis with [a link](/l "L") inside* and **bold *nested***.\n', 'inside', 'within', '*Emphasis with [a link](/l "L") within* and **bold *nested***.\n'],
    ['Größe und Übermaß 🎉 日本語。\n', 'und', 'oder', 'Größe oder Übermaß 🎉 日本語。\n'],
    ['> Quoted and\n> wrapped text.\n', 'wrapped', 'neatly wrapped', '> Quoted and\n> neatly wrapped text.\n'],
    ['- item with `code` and **bold**\n- next\n', 'item with', 'first item with', '- first item with `code` and **bold**\n- next\n'],
    ['Windows\r\nline endings\r\nhere.\r\n', 'line endings', 'CR LF line endings', 'Windows\r\nCR LF line endings\r\nhere.\r\n']
  ]
  for (const [body, find, replace, expected] of cases) {
    const i = served(body).findIndex(b => b.inner.includes(find))
    t.equal(edit(body, i, inner => inner.replace(find, replace)), expected, `${find} -> ${replace}`)
  }
})

t.test('a deleted word takes only its own bytes', async t => {
  const body = 'Keep ![img](/i.png) this very word[^f] please.\n\n[^f]: F.\n'
  t.equal(edit(body, 0, inner => inner.replace('this very word', 'this word')), 'Keep ![img](/i.png) this word[^f] please.\n\n[^f]: F.\n')
})

t.test('typed characters that Markdown reads are escaped, only in the typed text', async t => {
  const body = 'Some *old* text with \\_escapes\\_ and &amp; entities.\n'
  const out = edit(body, 0, inner => inner.replace('text', 'text 2*3 [x] &lt;b&gt; a_b &amp;copy; `c`'))
  t.equal(out, 'Some *old* text 2\\*3 \\[x\\] \\<b> a\\_b \\&copy; \\`c\\` with \\_escapes\\_ and &amp; entities.\n')
  t.equal(page(out), page(body).replace('text', 'text 2*3 [x] &#x3C;b> a_b &#x26;copy; `c`'), 'it renders as typed')
  // At a line start, a typed list or heading marker is escaped too.
  t.equal(edit('First line\nsecond line.\n', 0, inner => inner.replace('second', '- second')), 'First line\n\\- second line.\n')
  t.equal(edit('## Title\n', 0, inner => inner + ' #1'), '## Title \\#1\n')
})

t.test('elements the editor adds or removes are written alone, the bytes around kept', async t => {
  const body = 'A long paragraph, wrapped\nover lines, with ![an image](/a.png "A") and\na footnote.[^x]\n\n[^x]: X.\n'
  t.equal(edit(body, 0, inner => inner.replace('wrapped', '<strong>wrapped</strong>')),
    'A long paragraph, **wrapped**\nover lines, with ![an image](/a.png "A") and\na footnote.[^x]\n\n[^x]: X.\n')
  t.equal(edit(body, 0, inner => inner.replace('a footnote', 'a <a href="https://n.example">new link</a>')),
    'A long paragraph, wrapped\nover lines, with ![an image](/a.png "A") and\na [new link](https://n.example).[^x]\n\n[^x]: X.\n')
  t.equal(edit(body, 0, inner => inner.replace(/<img[^>]*>/, '')), 'A long paragraph, wrapped\nover lines, with and\na footnote.[^x]\n\n[^x]: X.\n', 'a removed image takes its source with it')
  t.equal(edit('Press Ctrl to go.\n', 0, inner => inner.replace('Ctrl', '<kbd>Ctrl</kbd>')), 'Press <kbd>Ctrl</kbd> to go.\n', 'kbd is written as inline HTML')
  t.equal(edit('A note here.\n\n[^n]: N.\n', 0, inner => inner.replace('here', 'here<sup><a href="#user-content-fn-n" data-footnote-ref>1</a></sup>')),
    'A note here[^n].\n\n[^n]: N.\n', 'a footnote reference is written as [^label]')
  t.equal(edit('Text *emph* end.\n', 0, inner => inner.replace('<em>emph</em>', 'emph')), 'Text emph end.\n', 'removed emphasis')
})

t.test('a change the source cannot take byte-precisely falls back to converting the block', async t => {
  // The text of a shortcut reference changes: it no longer names its definition.
  const body = 'See [docs] now.\n\n[docs]: http://d.example\n'
  const out = edit(body, 0, inner => inner.replace('>docs<', '>the docs<'))
  t.equal(out, 'See [the docs][docs] now.\n\n[docs]: http://d.example\n')
  t.equal(page(out), page(body).replace('>docs<', '>the docs<'))
})

t.test('every edit renders as the edited HTML', async t => {
  const body = 'Mixed *em* **strong** `code` ~~del~~ [l](/u) ![i](/i.png) <kbd>K</kbd> &copy; x\\*y\nwrapped end.\n'
  for (const [find, replace] of [['end', 'end here'], ['Mixed', 'Very mixed'], ['x*y', 'x*y*z'], ['wrapped', '# wrapped'], ['>em<', '>emphasis<'], ['>strong<', '>strong stuff<'], ['>code<', '>code!<'], ['>del<', '>deleted<'], ['>K<', '>Key<'], ['>l<', '>link<']] as const) {
    const block = served(body)[0]
    if (block === undefined) throw new Error('no block')
    const html = block.inner.replace(find, replace)
    const out = applyBlockEdit({ body, src: block.src, html }).body
    const [again] = served(out)
    t.equal(again?.inner.replace(/\s+/g, ' '), html.replace(/\s+/g, ' '), `${find} -> ${replace}: ${JSON.stringify(out)}`)
  }
})

t.test('a long block rewritten entirely is converted whole, not diffed token by token', async t => {
  const body = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ') + '\n'
  const other = Array.from({ length: 3000 }, (_, i) => `x${i}`).join(' ')
  const started = process.cpuUsage()
  t.equal(edit(body, 0, () => other), other + '\n')
  const used = process.cpuUsage(started)
  t.ok(used.user + used.system < 20_000_000, `bounded work (${Math.round((used.user + used.system) / 1000)} ms of CPU)`)
})

t.test('letters typed where they would make syntax are checked by a new parse', async t => {
  // A list marker would form at a line start: not spliced as is; the block still renders as typed.
  const list = 'A line\n. and more\n'
  const out = edit(list, 0, inner => inner.replace('. and', '1. and'))
  t.not(out, 'A line\n1. and more\n')
  t.equal(page(out).replace(/\s+/g, ' '), page(list).replace('. and', '1. and').replace(/\s+/g, ' '), JSON.stringify(out))
})
