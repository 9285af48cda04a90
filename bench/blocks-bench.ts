/**
 * In-place editing on the server (issue 29): the source block list (`GET /blocks`) and a block edit
 * (`md_edit`) for a 20 KB and a 1 MB body, timed in process on the content functions the routes
 * call, and the round-trip corpus figures of md_edit and md_block.
 */
import { performance } from 'node:perf_hooks'
import { bodyParser } from '../lib/content/markdown/parse-body.js'
import { sourceBlocks } from '../lib/content/markdown/block-list.js'
import { applyTextEdit } from '../lib/content/markdown/text-edit.js'
import { readCorpus, corpusFidelity } from './markdown-bench.js'
import type { SectionReport } from './report.js'
import type { BenchContext } from './bench-context.js'

/** Runs that a p50 is taken over. */
const RUNS = 30

/** A body of about `bytes` characters made of the corpus's LF documents, one after another. */
function bodyOf (bytes: number): string {
  const docs = readCorpus().filter(d => !d.body.includes('\r')).map(d => d.body)
  let body = ''
  for (let i = 0; body.length < bytes; i++) body += docs[i % docs.length] + '\n\n'
  return body
}

function timed (fn: () => void): number {
  const started = performance.now()
  fn()
  return performance.now() - started
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/** The list and an edit of the middle paragraph of a body, timed. */
function measure (body: string, runs: number): { list: number[], edit: number[] } {
  const list: number[] = []
  const edit: number[] = []
  const blocks = sourceBlocks(bodyParser()(body), body)
  const editable = blocks.filter(b => b.kind === 'paragraph' && b.editable && b.text.length > 20)
  const target = editable[Math.floor(editable.length / 2)]
  if (target === undefined) throw new Error('no paragraph to edit')
  for (let i = 0; i < runs; i++) {
    list.push(timed(() => sourceBlocks(bodyParser()(body), body)))
    edit.push(timed(() => applyTextEdit({ body, src: target.src, before: target.text, after: target.text + ' zyxword' })))
  }
  return { list, edit }
}

/**
 * The blocks section.
 * @param _ctx the bench context (unused: no site is needed)
 * @param report where the figures go
 */
export async function blocksBench (_ctx: BenchContext, report: SectionReport): Promise<void> {
  const small = measure(bodyOf(20 * 1024), RUNS)
  report.atMost('20 KB body: block list, p50', median(small.list), 'ms', 30)
  report.atMost('20 KB body: md_edit of one paragraph, p50', median(small.edit), 'ms', 30)
  report.atMost('20 KB body: longest single call (event loop held)', Math.max(...small.list, ...small.edit), 'ms', 100)
  const large = measure(bodyOf(1024 * 1024), 3)
  report.atMost('1 MB body: block list, p50', median(large.list), 'ms', 1000)
  report.atMost('1 MB body: md_edit of one paragraph, p50', median(large.edit), 'ms', 1000)
  const docs = readCorpus()
  for (const editor of ['md_edit', 'md_block'] as const) {
    const f = corpusFidelity(docs, editor)
    report.exactly(`${editor}: corpus blocks whose no-op edit keeps the body (of ${f.blocks})`, f.identical, f.blocks)
    report.atLeast(`${editor}: one appended word keeps the meaning`, 100 * f.appended / f.blocks, '%', 99.5)
    report.atLeast(`${editor}: one appended word changes only its bytes`, 100 * f.inserted / f.blocks, '%', 99)
  }
}
