/**
 * In-place editing on the server (issue 29): the source block list (`GET /blocks`) and a block edit
 * (`md_edit`) for a 20 KB and a 1 MB body, timed in process on the content functions the routes
 * call, and the round-trip corpus figures of md_edit and md_block.
 */
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { parseOutline } from '../lib/content/markdown/markdown-it-outline.js'
import { applyTextEdit } from '../lib/content/markdown/text-edit.js'
import { createBlockOutlineCache, outlineKey } from '../lib/commands/markdown-body.js'
import { readCorpus, corpusFidelity } from './markdown-bench.js'
import { boundedRenderFigures } from './bounded-render-bench.js'
import { BoundedRenderer } from '../lib/commands/bounded-render.js'
import { alignInChromium } from './alignment-bench.js'
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

function timed (fn: () => void, cpu?: number[]): number {
  const started = performance.now()
  const used = process.cpuUsage()
  fn()
  const { user, system } = process.cpuUsage(used)
  cpu?.push((user + system) / 1000)
  return performance.now() - started
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

interface Timings { coldList: number[], coldListCpu: number[], list: number[], edit: number[] }

/**
 * The list and an edit of the middle paragraph of a body, timed as the routes run them: cold (the
 * body's outline parsed as a render thread does on a body's first view) and with the
 * outline GET /blocks kept (the cache's look-up and the body's digest included: what the event
 * loop runs).
 */
function measure (body: string, runs: number, coldRuns: number): Timings {
  const out: Timings = { coldList: [], coldListCpu: [], list: [], edit: [] }
  const outline = parseOutline(body)
  const editable = outline.blocks.filter(b => b.kind === 'paragraph' && b.editable && b.text.length > 20)
  const target = editable[Math.floor(editable.length / 2)]
  if (target === undefined) throw new Error('no paragraph to edit')
  const edit = { body, src: target.src, before: target.text, after: target.text + ' zyxword' }
  const cache = createBlockOutlineCache()
  cache.set(outlineKey(body, false), outline)
  for (let i = 0; i < runs; i++) {
    if (i < coldRuns) out.coldList.push(timed(() => parseOutline(body), out.coldListCpu))
    out.list.push(timed(() => cache.get(outlineKey(body, false))))
    out.edit.push(timed(() => {
      const result = applyTextEdit({ ...edit, outline: cache.get(outlineKey(body, false)) })
      outlineKey(result.body, false)
    }))
  }
  return out
}

/**
 * A body's first view as the server runs it: the outline parsed in a render thread (the pool a
 * server keeps, warmed by `warm` views first), then, for the edit, md_edit's splice with that
 * outline on the event loop. Wall-clock and the process's CPU per view.
 */
async function firstViews (body: string, runs: number, warm: number): Promise<{ list: number[], listCpu: number[], edit: number[] }> {
  const out = { list: [] as number[], listCpu: [] as number[], edit: [] as number[] }
  const renderer = new BoundedRenderer()
  try {
    for (let i = 0; i < warm + runs; i++) {
      const started = performance.now()
      const cpu = process.cpuUsage()
      const outline = await renderer.outline(body, false)
      const listed = performance.now()
      const used = process.cpuUsage(cpu)
      const target = outline.blocks.filter(b => b.kind === 'paragraph' && b.editable && b.text.length > 20)[0]
      if (target === undefined) throw new Error('no paragraph to edit')
      applyTextEdit({ body, src: target.src, before: target.text, after: target.text + ' zyxword', outline })
      if (i < warm) continue
      out.list.push(listed - started)
      out.listCpu.push((used.user + used.system) / 1000)
      out.edit.push(performance.now() - started)
    }
  } finally {
    await renderer.close()
  }
  return out
}

/**
 * The blocks section.
 * @param _ctx the bench context (unused: no site is needed)
 * @param report where the figures go
 */
export async function blocksBench (_ctx: BenchContext, report: SectionReport): Promise<void> {
  const load = (): string => `(load ${os.loadavg()[0]?.toFixed(1) ?? '?'})`
  const smallBody = bodyOf(20 * 1024)
  const small = measure(smallBody, RUNS, 10)
  const smallFirst = await firstViews(smallBody, RUNS, 5)
  report.atMost(`20 KB body: block list, first view (parse in a render thread), p50 ${load()}`, median(smallFirst.list), 'ms', 30)
  report.info('20 KB body: block list, first view, CPU of the process p50', median(smallFirst.listCpu), 'ms')
  report.info(`20 KB body: block list, first view parsed in the bench's own thread (cold JIT, large heap), p50 ${load()}`, median(small.coldList), 'ms')
  report.atMost(`20 KB body: block list, outline kept, p50 ${load()}`, median(small.list), 'ms', 30)
  report.atMost(`20 KB body: md_edit of one paragraph, outline kept, p50 ${load()}`, median(small.edit), 'ms', 30)
  report.atMost(`20 KB body: md_edit of one paragraph, no outline (parse in a render thread), p50 ${load()}`, median(smallFirst.edit), 'ms', 30)
  // A first view's parse runs in a render thread: the event loop runs the look-up and the edit.
  report.atMost(`20 KB body: longest call on the event loop ${load()}`, Math.max(...small.list, ...small.edit), 'ms', 100)
  // Twice the runs: with 30, the ratios read 0.99-1.18 over six passes on a quiet machine.
  await boundedRenderFigures(report, smallBody, 2 * RUNS, load)
  const large = measure(bodyOf(1024 * 1024), 5, 1)
  // The largest body the server parses (1,000,000 characters, docs/limits.md), cut at a blank line.
  const largest = bodyOf(1024 * 1024)
  const largeFirst = await firstViews(largest.slice(0, largest.lastIndexOf('\n\n', 1_000_000) + 2), 3, 1)
  report.atMost(`1 MB body (1,000,000 characters): block list, first view (parse in a render thread), p50 ${load()}`, median(largeFirst.list), 'ms', 1000)
  report.info('1 MB body: block list, first view, CPU of the process p50', median(largeFirst.listCpu), 'ms')
  report.info(`1 MB body: block list, first view parsed in the bench's own thread ${load()}`, median(large.coldList), 'ms')
  report.atMost(`1 MB body: block list, outline kept, p50 ${load()}`, median(large.list), 'ms', 1000)
  report.atMost(`1 MB body: md_edit of one paragraph, outline kept, p50 ${load()}`, median(large.edit), 'ms', 100)
  const aligned = await alignInChromium(bodyOf(20 * 1024), RUNS)
  report.atMost(`20 KB body: alignment in Chromium, p50 (${aligned.editable} of ${aligned.blocks} blocks paired) ${load()}`, median(aligned.ms), 'ms', 20)
  const docs = readCorpus()
  for (const editor of ['md_edit', 'md_block'] as const) {
    const f = corpusFidelity(docs, editor)
    report.exactly(`${editor}: corpus blocks whose no-op edit keeps the body (of ${f.blocks})`, f.identical, f.blocks)
    report.atLeast(`${editor}: one appended word keeps the meaning`, 100 * f.appended / f.blocks, '%', 99.5)
    report.atLeast(`${editor}: one appended word changes only its bytes`, 100 * f.inserted / f.blocks, '%', 99)
  }
}
