/**
 * The in-place editor's pairing of a generator's rendered blocks with the entry's source blocks
 * (lib/browser/editor/align.ts): what generators change is tolerated, what they add stays unpaired,
 * and a 20 KB body is paired well inside the 20 ms budget.
 */
import t from 'tap'
import { alignBlocks, alignmentKey } from '../../lib/browser/editor/align.js'
import type { BlockKind, SourceBlock } from '../../lib/api-shapes.js'

const src = (kind: BlockKind, text: string, depth?: number): SourceBlock => ({ src: `0:1:${'0'.repeat(16)}`, kind, text, editable: true, ...(depth === undefined ? {} : { depth }) })

t.test('the compared key keeps letters and digits only', async t => {
  t.equal(alignmentKey('“Smart” quotes — and dashes… ¶'), 'smartquotesanddashes')
  t.equal(alignmentKey('It\'s  a\nhard\twrap &amp; more'), 'itsahardwrapampmore')
  t.equal(alignmentKey('Café'), 'cafe')
})

t.test('pairs through typography, anchors, footnote numbers, attribute lists; leaves template output alone', async t => {
  const page = [
    { tag: 'h2', text: 'Getting “started” #' },
    { tag: 'p', text: 'It’s a paragraph — with dashes and a note1.' },
    { tag: 'div', text: 'Shortcode output the source does not hold' },
    { tag: 'li', text: 'First item' },
    { tag: 'li', text: 'Second item' },
    { tag: 'p', text: '' },
    { tag: 'pre', text: 'const a = 1\n' },
    { tag: 'p', text: 'A note box.' },
    { tag: 'hr', text: '' },
    { tag: 'p', text: 'The end.' }
  ]
  const source = [
    src('heading', 'Getting "started"', 2),
    src('paragraph', "It's a paragraph -- with dashes and a note."),
    src('listItem', 'First item'),
    src('listItem', 'Second item'),
    src('paragraph', ''),
    src('code', 'const a = 1'),
    src('definition', ''),
    src('paragraph', 'A note box.\n{: .note}'),
    src('thematicBreak', ''),
    src('paragraph', 'The end.')
  ]
  t.same(alignBlocks(page, source), [0, 1, null, 2, 3, 4, 5, 7, 8, 9])
})

t.test('a block the page does not show and a block the source does not hold are both skipped', async t => {
  const page = [{ tag: 'p', text: 'One' }, { tag: 'p', text: 'Inserted by a template' }, { tag: 'p', text: 'Three' }]
  const source = [src('paragraph', 'One'), src('html', '<!-- a comment -->'), src('paragraph', 'Three')]
  t.same(alignBlocks(page, source), [0, null, 2])
  t.same(alignBlocks([{ tag: 'h2', text: 'One' }], [src('paragraph', 'One')]), [null], 'a heading never pairs with a paragraph')
})

t.test('a 20 KB body pairs in well under 20 ms', async t => {
  const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ')
  const source: SourceBlock[] = []
  const page: Array<{ tag: string, text: string }> = []
  let size = 0
  for (let i = 0; size < 20_000; i++) {
    const text = `Block ${i}: ` + Array.from({ length: 12 }, (_, k) => words[(i * 7 + k) % words.length]).join(' ') + ' "quoted" -- end.'
    size += text.length + 2
    source.push(src(i % 10 === 0 ? 'heading' : 'paragraph', text, 2))
    page.push({ tag: i % 10 === 0 ? 'h2' : 'p', text: text.replace('"quoted"', '“quoted”').replace('--', '–') })
    if (i % 25 === 0) page.push({ tag: 'div', text: `Template output ${i}` })
  }
  alignBlocks(page, source)
  const runs: number[] = []
  // CPU time, not wall time: other processes on a busy machine do not count against the budget.
  for (let r = 0; r < 5; r++) {
    const began = process.cpuUsage()
    const pairs = alignBlocks(page, source)
    const used = process.cpuUsage(began)
    runs.push((used.user + used.system) / 1000)
    if (r === 0) t.equal(pairs.filter(p => p !== null).length, source.length, 'every source block paired')
  }
  const median = runs.sort((a, b) => a - b)[2]!
  t.comment(`alignment of a ${(size / 1000).toFixed(0)} KB body (${source.length} blocks): median ${median.toFixed(2)} ms of CPU`)
  t.ok(median < 20, `median ${median.toFixed(2)} ms`)
})
