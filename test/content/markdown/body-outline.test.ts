import t from 'tap'
import { readFileSync } from 'node:fs'
import { fromRoot } from '../../helpers/repo-root.js'
import { bodyParser } from '../../../lib/content/markdown/parse-body.js'
import { outlineOf } from '../../../lib/content/markdown/body-outline.js'
import { applyTextEdit } from '../../../lib/content/markdown/text-edit.js'

// An edit parses only its block's top-level node; the outline it returns for the new body must be
// the one a whole parse of that body gives, edit after edit (references, footnotes, lists, CRLF).
const DOCS = ['05-changelog.md', '12-links-and-code.md', '19-blog-footnotes.md', '25-crlf-windows.md', '10-tutorial-nested.md']

for (const name of DOCS) {
  t.test(name, async t => {
    const parse = bodyParser()
    let body = readFileSync(fromRoot(`test/fixtures/markdown-corpus/${name}`), 'utf8')
    let outline = outlineOf(parse(body), body)
    let edits = 0
    for (let i = 0; i < outline.blocks.length; i += 2) {
      const block = outline.blocks[i]!
      if (!block.editable || block.text === '') continue
      const result = applyTextEdit({ body, src: block.src, before: block.text, after: block.text + ' zyxword', outline })
      const whole = outlineOf(parse(result.body), result.body)
      t.not(result.outline, null, `appending a word to ${block.src} leaves the blocks around it as they were`)
      t.same(result.outline, whole, `after editing ${block.src} the outline is the whole parse's`)
      t.ok(result.body.includes('zyxword'), 'the word is in the body')
      body = result.body
      outline = result.outline ?? whole
      edits++
    }
    t.ok(edits >= 2, `${edits} chained edits`)
  })
}

t.test('a stale or forged hint names no block of the outline', async t => {
  const body = 'Para one.\n\n```\ncode line\n```\n\nPara two.\n'
  const outline = outlineOf(bodyParser()(body), body)
  t.throws(() => applyTextEdit({ body, src: '0:9:0000000000000000', before: 'Para one', after: 'Para one x', outline }), { name: 'SourceMismatchError' })
  // A hint inside the code block with a matching hash is still no block.
  const { sourceHash } = await import('../../../lib/content/markdown/source-hint.js')
  t.throws(() => applyTextEdit({ body, src: `15:19:${sourceHash(body.slice(15, 19))}`, before: 'code', after: 'code x', outline }), { name: 'SourceMismatchError' })
})

t.test('a label with an escaped bracket is defined again as the source writes it', async t => {
  const parse = bodyParser()
  const body = 'See [^a\\]b] and [x\\]y][].\n\nOther para.\n\n[^a\\]b]: The note.\n\n[x\\]y]: /url\n'
  const outline = outlineOf(parse(body), body)
  t.same(outline.labels.map(l => l.line), ['[^a\\]b]: x', '[x\\]y]: #'], 'each label as written in the source')
  const block = outline.blocks[0]!
  const result = applyTextEdit({ body, src: block.src, before: block.text, after: block.text + ' zyxword', outline })
  t.same(result.outline, outlineOf(parse(result.body), result.body), 'the edited paragraph still calls the note and the link')
})
