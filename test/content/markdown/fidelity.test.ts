import t from 'tap'
import { readCorpus, corpusFidelity } from '../../../bench/markdown-bench.js'

t.test('corpus round-trip fidelity', async t => {
  const docs = readCorpus()
  t.ok(docs.length >= 15, 'the corpus has enough documents')
  t.ok(docs.some(d => d.body.includes('\r\n')), 'one has CRLF line endings')
  const f = corpusFidelity(docs)
  const a = 100 * f.identical / f.blocks
  const b = 100 * f.appended / f.blocks
  t.comment(`blocks: ${f.blocks}; (a) no-op edit keeps the body: ${a.toFixed(2)}%; (b) appended word only: ${b.toFixed(2)}%`)
  for (const failure of f.failures) t.comment(`(b) differs: ${failure}`)
  t.ok(f.blocks > 150, 'enough blocks to measure')
  t.equal(a, 100, `(a) target 100%; failures: ${f.identityFailures.join(', ')}`)
  t.ok(b >= 98, '(b) target >= 98%')
})
