import t from 'tap'
import {
  mapBaseRange, renderMarkdown, applyBlockEdit, isMarkdownDraft, mergeMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit,
  type MarkdownDraft
} from '../../../lib/content/markdown/index.js'

const hints = (body: string): string[] => [...renderMarkdown(body, { collection: 'c', id: 'i' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)

/** Applies a block edit to a draft the way md_block does. */
function blockEdit (draft: MarkdownDraft, block: number, html: string): MarkdownDraft {
  const r = applyBlockEdit({ body: draft.body, src: hints(draft.body)[block] as string, html })
  return recordMarkdownEdit(draft, r.start, r.end - (r.body.length - draft.body.length), r.body)
}

const base = '# Title\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n'

t.test('edits accumulate, also growing and overlapping ones, and stay consistent', async t => {
  let d = emptyMarkdownDraft(base)
  t.ok(isMarkdownDraft(d))
  d = blockEdit(d, 1, 'First paragraph, now much longer than before.')
  d = blockEdit(d, 3, 'Third.')
  t.equal(d.body, '# Title\n\nFirst paragraph, now much longer than before.\n\nSecond paragraph.\n\nThird.\n')
  t.equal(d.edits.length, 2)
  t.ok(isMarkdownDraft(d), 'edits applied to baseBody give body')
  d = blockEdit(d, 1, 'First again.')
  t.equal(d.edits.length, 2, 'a second edit of the same block folds into the first')
  t.ok(isMarkdownDraft(d))
  d = blockEdit(d, 1, 'First paragraph.')
  t.equal(d.edits.length, 1, 'putting the text back drops the edit')
  t.equal(d.baseBody, base)
  t.ok(isMarkdownDraft(d))
})

t.test('merge: unchanged base gives the draft body', async t => {
  const d = blockEdit(emptyMarkdownDraft(base), 2, 'Second, edited.')
  t.same(mergeMarkdownDraft(d, base), { body: d.body })
})

t.test('merge: base changed elsewhere is merged', async t => {
  const d = blockEdit(blockEdit(emptyMarkdownDraft(base), 2, 'Second, edited.'), 1, 'First, edited.')
  const moved = '# New title\n\nIntro added.\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph, changed upstream.\n\nAnd a new end.\n'
  t.same(mergeMarkdownDraft(d, moved), {
    body: '# New title\n\nIntro added.\n\nFirst, edited.\n\nSecond, edited.\n\nThird paragraph, changed upstream.\n\nAnd a new end.\n'
  })
  // a blank line inserted between the two edited blocks is outside both ranges
  t.same(mergeMarkdownDraft(d, base.replace('First paragraph.\n\n', 'First paragraph.\n\n\n')), {
    body: '# Title\n\nFirst, edited.\n\n\nSecond, edited.\n\nThird paragraph.\n'
  })
})

t.test('merge: base changed inside an edited range is stale', async t => {
  const d = blockEdit(emptyMarkdownDraft(base), 2, 'Second, edited.')
  t.same(mergeMarkdownDraft(d, base.replace('Second paragraph.', 'Second paragraph, upstream.')), { stale: true })
  t.same(mergeMarkdownDraft(d, base.replace('Second paragraph.\n\n', '')), { stale: true }, 'block deleted upstream')
  t.same(mergeMarkdownDraft(d, 'Completely different.\n'), { stale: true })
  t.same(mergeMarkdownDraft(d, base.replace('Third', 'Fourth')), { body: d.body.replace('Third', 'Fourth') }, 'the neighbour is fine')
})

t.test('malformed drafts are not MarkdownDrafts', async t => {
  const good = blockEdit(emptyMarkdownDraft(base), 2, 'Second, edited.')
  const bad: unknown[] = [
    null, 'x', [], {}, { ...good, version: 2 }, { ...good, baseBody: 1 }, { ...good, body: null }, { ...good, edits: {} },
    { ...good, edits: [{ start: 0, end: 1 }] }, { ...good, edits: [{ start: -1, end: 1, text: '' }] },
    { ...good, edits: [{ start: 5, end: 2, text: '' }] }, { ...good, edits: [{ start: 0, end: 9999, text: '' }] },
    { ...good, edits: [{ start: 1.5, end: 2, text: '' }] },
    { ...good, body: good.body + 'tampered' },
    { ...good, edits: [{ start: 20, end: 30, text: 'a' }, { start: 10, end: 25, text: 'b' }] }
  ]
  t.ok(isMarkdownDraft(good))
  for (const value of bad) t.notOk(isMarkdownDraft(value), JSON.stringify(value))
})

t.test('base ranges map into the draft body unless an edit touches them', async t => {
  const d = blockEdit(emptyMarkdownDraft(base), 1, 'First paragraph, longer now.')
  const third = base.indexOf('Third paragraph.')
  const mapped = mapBaseRange(d, third, third + 'Third paragraph.'.length)
  t.ok(mapped !== null)
  t.equal(d.body.slice(mapped?.start, mapped?.end), 'Third paragraph.')
  t.same(mapBaseRange(d, 0, 7), { start: 0, end: 7 }, 'before the edit: unmoved')
  const first = base.indexOf('First paragraph.')
  t.equal(mapBaseRange(d, first, first + 16), null, 'the edited block itself')
})

t.test('merge onto a long base rewritten below the edit: merged, in bounded time', async t => {
  const lines = Array.from({ length: 3000 }, (_, i) => `Paragraph ${i}.\n\n`)
  const long = lines.join('')
  const d = blockEdit(emptyMarkdownDraft(long), 0, 'Paragraph 0, edited.')
  const rewritten = lines.slice(0, 10).join('') + lines.slice(10).map(l => l.replace('.', ', rewritten.')).join('')
  const started = Date.now()
  const merged = mergeMarkdownDraft(d, rewritten)
  t.same(merged, { body: rewritten.replace('Paragraph 0.', 'Paragraph 0, edited.') })
  t.ok(Date.now() - started < 5000, `merged in ${Date.now() - started} ms`)
  t.same(mergeMarkdownDraft(d, rewritten.replace('Paragraph 0.', 'Paragraph zero.')), { stale: true })
})
