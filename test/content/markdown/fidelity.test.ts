import t from 'tap'
import { readCorpus, corpusFidelity } from '../../../bench/markdown-bench.js'

// One editor per file (test/content/markdown/fidelity-md-edit.test.ts measures md_edit), so each file stays short.
const editor = process.env.CMS_FIDELITY_EDITOR === 'md_edit' ? 'md_edit' : 'md_block'

t.test(`corpus round-trip fidelity through ${editor}`, async t => {
  const docs = readCorpus()
  t.ok(docs.length >= 25, 'the corpus has enough documents')
  const constructs = [/!\[[^\]]*\]\(/, /\[\^\w+\][^:]/, /&nbsp;/, /&trade;/, /&copy;/, /<kbd>/, /<sup>/, /<abbr title/, /<del>/, /<a href/,
    /`` `/, / ###\r?\n/, /\]\([^)\s]+ "[^"]+"\)/, /^\[\w+\]: \S+ "/m, /\]\[\w+\]/, /\S\n\S.*\n\S.*\n\S/, /<https:/, /www\./, /\\[*_[]/, /\*\*[^*]*\*[^*]+\*/,
    /<mailto:/, /\\\r?\n/, / {2}\r?\n\S/, /^- https?:\/\/\S+$/m, /<kbd>/, /&#x[0-9A-F]+;/, /\]\[\]/, /^\[\w+\]: </m, /``[^`]+`[^`]+``/]
  for (const construct of constructs) t.ok(docs.some(d => construct.test(d.body)), `the corpus holds ${String(construct)}`)
  t.ok(docs.some(d => d.body.includes('\r\n')), 'one has CRLF line endings')
  const f = corpusFidelity(docs, editor)
  const a = 100 * f.identical / f.blocks
  const b = 100 * f.appended / f.blocks
  const c = 100 * f.inserted / f.blocks
  t.comment(`${editor}: blocks: ${f.blocks}; (a) no-op edit keeps the body: ${a.toFixed(2)}%; (b) appended word only: ${b.toFixed(2)}%; (c) body differs by the word alone: ${c.toFixed(2)}%`)
  for (const failure of f.failures) t.comment(`(b) differs: ${failure}`)
  for (const failure of f.insertFailures) t.comment(`(c) differs: ${failure}`)
  t.ok(f.blocks > 150, 'enough blocks to measure')
  t.equal(a, 100, `(a) target 100%; failures: ${f.identityFailures.join(', ')}`)
  t.ok(b >= 99.5, '(b) target >= 99.5%')
  t.ok(c >= 99, '(c) target >= 99%')
})
