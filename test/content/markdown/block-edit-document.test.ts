import t from 'tap'
import { renderMarkdown, applyBlockEdit, SourceMismatchError, formatSourceHint } from '../../../lib/content/markdown/index.js'

// A block edit reads the rest of its document: fences, comments, definitions, list looseness and
// the document's emphasis markers decide what a block is and how an edit is written.

const hint = (body: string, text: string): string => {
  const start = body.indexOf(text)
  return formatSourceHint(body, start, start + text.length)
}
const srcs = (body: string): string[] => [...renderMarkdown(body, { collection: 'c', id: 'i' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)

t.test('a block after a fenced code block with blank lines, list items and definitions in it', async t => {
  const body = 'Intro\n\n```\ncode\n\n- item\n\n[x]: /fake\n\nnot a para\n```\n\nAfter [x].\n\n[x]: /real\n'
  const r = applyBlockEdit({ body, src: hint(body, 'After [x].'), html: 'After <a href="/real">x</a> more.' })
  t.equal(r.body, body.replace('After [x].', 'After [x] more.'))
  const inItem = '- ```\n  code\n\n  [x]: /fake\n\n   ```\n  ```\n\nAfter [x].\n\n[x]: /real\n'
  t.equal(applyBlockEdit({ body: inItem, src: hint(inItem, 'After [x].'), html: 'After <a href="/real">x</a> more.' }).body, inItem.replace('After [x].', 'After [x] more.'))
})

t.test('a forged hint inside a fence or an HTML comment is refused', async t => {
  const fenced = 'Intro\n\n```\ncode\n\nnot a para\n```\n\nAfter.\n'
  t.throws(() => applyBlockEdit({ body: fenced, src: hint(fenced, 'not a para'), html: 'x' }), SourceMismatchError)
  const comment = 'Intro\n\n<!--\n\nhidden para\n\n-->\n\nAfter.\n'
  t.throws(() => applyBlockEdit({ body: comment, src: hint(comment, 'hidden para'), html: 'x' }), SourceMismatchError)
  const nested = '- item\n\n  ```\n  code\nafter\n\n```\nin fence\n\nfake para\n```\n\nreal para\n'
  t.throws(() => applyBlockEdit({ body: nested, src: hint(nested, 'fake para'), html: 'x' }), SourceMismatchError)
  t.equal(applyBlockEdit({ body: nested, src: hint(nested, 'real para'), html: 'real para more' }).body, nested.replace('real para', 'real para more'))
})

t.test('a loose list stays loose', async t => {
  const body = 'Intro\n\n- one\n\n- two\n\n- three\n\nEnd\n'
  const src = srcs(body)[2] as string
  const r = applyBlockEdit({ body, src, html: 'two more' })
  t.equal(r.body, 'Intro\n\n- one\n\n- two more\n\n- three\n\nEnd\n')
  t.match(renderMarkdown(r.body, { collection: 'c', id: 'i' }), /<li[^>]*>\s*<p>two more<\/p>/)
  t.equal(applyBlockEdit({ body, src, html: 'two' }).changed, false)
})

t.test('a reference whose definition ends the document', async t => {
  const body = 'See [the docs][d].\n\nOther.\n\n[d]: https://example.com/docs "Docs"\n'
  const src = srcs(body)[0] as string
  t.equal(applyBlockEdit({ body, src, html: 'See <a href="https://example.com/docs">the docs</a>.' }).changed, false)
  const r = applyBlockEdit({ body, src, html: 'See <a href="https://example.com/docs">the docs</a> now.' })
  t.equal(r.body, body.replace('[d].', '[d] now.'))
  const other = srcs(body)[1] as string
  t.equal(applyBlockEdit({ body, src: other, html: 'Other <a href="https://example.com/docs">page</a>.' }).body, body.replace('Other.', 'Other [page][d].'))
})

t.test('a CRLF document', async t => {
  const body = '# Title\r\n\r\nOne *a*.\r\n\r\n```\r\n\r\nx\r\n```\r\n\r\nTwo.\r\n'
  t.equal(srcs(body).length, 4, 'the heading, the paragraphs and the code carry hints')
  t.equal(applyBlockEdit({ body, src: hint(body, 'Two.'), html: 'Two <strong>b</strong>' }).body, body.replace('Two.', 'Two **b**'))
})

t.test('a label defined twice: the first definition wins', async t => {
  const body = '[a]: /first\n\n[a]: /second\nText [x][a].\n'
  const src = hint(body, 'Text [x][a].')
  t.equal(applyBlockEdit({ body, src, html: 'Text <a href="/first">x</a>.' }).changed, false)
  t.equal(applyBlockEdit({ body, src, html: 'Text <a href="/first">x</a> more.' }).body, body.replace('[a].', '[a] more.'))
})

t.test('an unclosed block at the end of the document', async t => {
  const body = '[a]: /url\n\n> quote\n\nPara _e_ **s**\n<?php\nno end\n'
  t.equal(applyBlockEdit({ body, src: hint(body, '> quote'), html: 'x <em>y</em>' }).body, body.replace('> quote', '> x _y_'))
})

t.test('the document style: first markers from other blocks, definitions from everywhere', async t => {
  const body = 'Plain.\n\nUses _this_ and __that__.\n\nEdit me.\n\n[far]: https://example.com/far\n'
  const r = applyBlockEdit({ body, src: hint(body, 'Edit me.'), html: '<em>Edit</em> <strong>me</strong> <a href="https://example.com/far">x</a>.' })
  t.equal(r.body, body.replace('Edit me.', '_Edit_ __me__ [x][far].'))
})
