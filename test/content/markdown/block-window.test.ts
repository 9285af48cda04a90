import t, { type Test } from 'tap'
import { toHtml } from 'hast-util-to-html'
import { visit } from 'unist-util-visit'
import type { Element } from 'hast'
import { readCorpus } from '../../../bench/markdown-bench.js'
import { renderTree } from '../../../lib/content/markdown/render.js'
import { renderMarkdown, applyBlockEdit, SourceMismatchError, formatSourceHint } from '../../../lib/content/markdown/index.js'
import { blockWindow } from '../../../lib/content/markdown/block-window.js'
import { bodyChunks } from '../../../lib/content/markdown/body-chunks.js'
import { bodyParser, parseBody } from '../../../lib/content/markdown/parse-body.js'
import { editableBlocks } from '../../../lib/content/markdown/editable-blocks.js'

/** An edit's outcome, comparable across the two paths: the result, or the error's class. */
function outcome (body: string, src: string, html: string, window: boolean): unknown {
  try {
    return applyBlockEdit({ body, src, html, window })
  } catch (err) {
    return { error: err instanceof Error ? err.name : String(err) }
  }
}

/** Every hinted element of a body's rendering: its hint and inner HTML. */
function renderedBlocks (body: string): Array<{ src: string, inner: string }> {
  const out: Array<{ src: string, inner: string }> = []
  visit(renderTree(body, { collection: 'c', id: 'i' }), 'element', (node: Element) => {
    const src = node.properties.dataCmsSrc
    if (typeof src === 'string') out.push({ src, inner: toHtml(node.children) })
  })
  return out
}

/** Whether the window (not the fallback) serves this hint. */
function windowed (body: string, src: string): boolean {
  const [start = 0, end = 0] = src.split(':').map(Number)
  const window = blockWindow(body, start, end, bodyParser())
  return window !== null && editableBlocks(window.tree).some(b => b.start === start && b.end === end)
}

/** The four edits of each block, both paths; returns how many blocks the window served. */
function compareEdits (t: Test, name: string, body: string, stride = 1): number {
  const url = parseBody(body).children.find(c => c.type === 'definition')?.url ?? 'https://example.com/'
  const blocks = renderedBlocks(body).filter((_, i) => i % stride === 0)
  let served = 0
  for (const { src, inner } of blocks) {
    if (windowed(body, src)) served++
    for (const html of [
      inner,
      inner + ' more',
      `<em>lead</em> ${inner} <strong>tail</strong>`,
      `${inner} <a href="${url}">see</a>`
    ]) {
      t.same(outcome(body, src, html, true), outcome(body, src, html, false), `${name} ${src} ${JSON.stringify(html.slice(-40))}`)
    }
  }
  return served / Math.max(1, blocks.length)
}

t.test('windowed and full-parse edits agree on every block of the corpus', async t => {
  const docs = readCorpus()
  for (const doc of docs) {
    // Every other block: the corpus has grown to 25 documents (each block is edited 8 times here).
    const served = compareEdits(t, doc.name, doc.body, 2)
    t.ok(served >= 0.9, `${doc.name}: the window serves ${Math.round(served * 100)}% of blocks`)
  }
})

t.test('windowed and full-parse edits agree on the 20 KB joined document', async t => {
  const lf = readCorpus().filter(d => !d.body.includes('\r\n')).map(d => d.body)
  let body = ''
  for (let i = 0; body.length < 20_000; i++) body += (lf[i % lf.length] ?? '') + '\n'
  // Each full parse of 20 KB is slow: every 10th block (all kinds of blocks occur).
  const served = compareEdits(t, 'joined', body, 10)
  t.ok(served >= 0.9, `the window serves ${Math.round(served * 100)}% of blocks`)
})

const hint = (body: string, text: string): string => {
  const start = body.indexOf(text)
  return formatSourceHint(body, start, start + text.length)
}
const srcs = (body: string): string[] => [...renderMarkdown(body, { collection: 'c', id: 'i' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)
const same = (t: Test, body: string, src: string, html: string): void => {
  t.same(outcome(body, src, html, true), outcome(body, src, html, false), html)
}

t.test('a block after a fenced code block with blank lines, list items and definitions in it', async t => {
  const body = 'Intro\n\n```\ncode\n\n- item\n\n[x]: /fake\n\nnot a para\n```\n\nAfter [x].\n\n[x]: /real\n'
  t.notOk(bodyChunks(body).some(c => c.start > body.indexOf('```') && c.start < body.indexOf('After')), 'no chunk starts inside the fence')
  const src = hint(body, 'After [x].')
  t.ok(windowed(body, src))
  const r = applyBlockEdit({ body, src, html: 'After <a href="/real">x</a> more.' })
  t.equal(r.body, body.replace('After [x].', 'After [x] more.'))
  same(t, body, src, 'After <a href="/real">x</a> more.')
  const inItem = '- ```\n  code\n\n  [x]: /fake\n\n   ```\n  ```\n\nAfter [x].\n\n[x]: /real\n'
  const itemSrc = hint(inItem, 'After [x].')
  t.ok(windowed(inItem, itemSrc))
  same(t, inItem, itemSrc, 'After <a href="/real">x</a> more.')
})

t.test('a forged hint inside a fence or an HTML comment is refused', async t => {
  const fenced = 'Intro\n\n```\ncode\n\nnot a para\n```\n\nAfter.\n'
  t.throws(() => applyBlockEdit({ body: fenced, src: hint(fenced, 'not a para'), html: 'x' }), SourceMismatchError)
  const comment = 'Intro\n\n<!--\n\nhidden para\n\n-->\n\nAfter.\n'
  t.throws(() => applyBlockEdit({ body: comment, src: hint(comment, 'hidden para'), html: 'x' }), SourceMismatchError)
  // The scan does not know the indented fence is a list item's (closed by `after`): it keeps both
  // readings, so it never mistakes the later fences' content for text.
  const nested = '- item\n\n  ```\n  code\nafter\n\n```\nin fence\n\nfake para\n```\n\nreal para\n'
  t.throws(() => applyBlockEdit({ body: nested, src: hint(nested, 'fake para'), html: 'x' }), SourceMismatchError)
  same(t, nested, hint(nested, 'real para'), 'real para more')
})

t.test('a loose list stays loose', async t => {
  const body = 'Intro\n\n- one\n\n- two\n\n- three\n\nEnd\n'
  const src = srcs(body)[2] as string
  t.ok(windowed(body, src))
  const r = applyBlockEdit({ body, src, html: 'two more' })
  t.equal(r.body, 'Intro\n\n- one\n\n- two more\n\n- three\n\nEnd\n')
  t.match(renderMarkdown(r.body, { collection: 'c', id: 'i' }), /<li[^>]*>\s*<p>two more<\/p>/)
  same(t, body, src, 'two more')
  same(t, body, src, 'two')
})

t.test('a reference whose definition ends the document', async t => {
  const body = 'See [the docs][d].\n\nOther.\n\n[d]: https://example.com/docs "Docs"\n'
  const src = srcs(body)[0] as string
  t.ok(windowed(body, src))
  t.equal(applyBlockEdit({ body, src, html: 'See <a href="https://example.com/docs">the docs</a>.' }).changed, false)
  const r = applyBlockEdit({ body, src, html: 'See <a href="https://example.com/docs">the docs</a> now.' })
  t.equal(r.body, body.replace('[d].', '[d] now.'))
  const other = srcs(body)[1] as string
  t.equal(applyBlockEdit({ body, src: other, html: 'Other <a href="https://example.com/docs">page</a>.' }).body, body.replace('Other.', 'Other [page][d].'))
  same(t, body, other, 'Other <a href="https://example.com/docs">page</a>.')
})

t.test('a CRLF document', async t => {
  const body = '# Title\r\n\r\nOne *a*.\r\n\r\n```\r\n\r\nx\r\n```\r\n\r\nTwo.\r\n'
  for (const src of srcs(body)) {
    t.ok(windowed(body, src), src)
    same(t, body, src, 'Two <strong>b</strong>')
  }
  t.equal(applyBlockEdit({ body, src: hint(body, 'Two.'), html: 'Two <strong>b</strong>' }).body, body.replace('Two.', 'Two **b**'))
})

t.test('a label defined before the window and again in it: the first definition wins, as in the full parse', async t => {
  const body = '[a]: /first\n\n[a]: /second\nText [x][a].\n'
  const src = hint(body, 'Text [x][a].')
  t.ok(windowed(body, src), 'the chunks are parsed in document order, so no fallback is needed')
  t.equal(applyBlockEdit({ body, src, html: 'Text <a href="/first">x</a>.' }).changed, false)
  const r = applyBlockEdit({ body, src, html: 'Text <a href="/first">x</a> more.' })
  t.equal(r.body, body.replace('[a].', '[a] more.'))
  same(t, body, src, 'Text <a href="/first">x</a> more.')
  same(t, body, src, 'Text <a href="/second">x</a> more.')
})

t.test('an unclosed block at the end of the document', async t => {
  const body = '[a]: /url\n\n> quote\n\nPara _e_ **s**\n<?php\nno end\n'
  const src = hint(body, '> quote')
  same(t, body, src, 'x <em>y</em> <strong>z</strong> <a href="/url">w</a>')
  t.equal(applyBlockEdit({ body, src, html: 'x <em>y</em>' }).body, body.replace('> quote', '> x _y_'))
})

t.test('the document style: first markers from other chunks, definitions from everywhere', async t => {
  const body = 'Plain.\n\nUses _this_ and __that__.\n\nEdit me.\n\n[far]: https://example.com/far\n'
  const src = hint(body, 'Edit me.')
  const r = applyBlockEdit({ body, src, html: '<em>Edit</em> <strong>me</strong> <a href="https://example.com/far">x</a>.' })
  t.equal(r.body, body.replace('Edit me.', '_Edit_ __me__ [x][far].'))
  same(t, body, src, '<em>Edit</em> <strong>me</strong> <a href="https://example.com/far">x</a>.')
})
