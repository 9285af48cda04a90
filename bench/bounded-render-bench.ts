/**
 * What bounded rendering costs an ordinary body: `GET /render` renders, and `GET /blocks` parses a
 * body's outline, in a worker thread (lib/commands/bounded-render.ts) where they ran in the
 * request's own thread. Each pair is timed on the same 20 KB body, in alternating blocks of calls
 * (alternating-blocks.ts); the issue's target is the bounded p50 within 10% of the plain one. Each path is warmed by the same number of calls first (the pool's calls are sequential,
 * so one thread takes them all). The CPU of each call (the whole process's: the thread, the event
 * loop and V8's collector threads) is printed too, since wall-clock figures on a busy machine mislead.
 */
import { performance } from 'node:perf_hooks'
import { isDeepStrictEqual } from 'node:util'
import { BoundedRenderer } from '../lib/commands/bounded-render.js'
import { renderMarkdown } from '../lib/content/markdown/render.js'
import { parseOutline } from '../lib/content/markdown/markdown-it-outline.js'
import { inAlternatingBlocks } from './alternating-blocks.js'
import type { SectionReport } from './report.js'

/** The bounded path's p50 over the plain one's, at most (the issue: unchanged within 10%). */
const MAX_RATIO = 1.1
/**
 * Calls of each path before the timed ones, so both run compiled code: a new thread's outline took
 * 3-5x its settled CPU over its first 5 calls, ~2x over the next 5 (as the bench's own thread does).
 * Neither settles for good: each full collection makes V8 compile the parser's functions again
 * (docs/performance.md), so the ratio moves with which isolate collects during the timed calls.
 */
const WARM_UP = 20
/**
 * Calls of one path in a row. Call by call, each bounded call paid for the plain call's garbage
 * (20 KB outline: CPU per bounded call 23 against 16 ms, ratio 1.32-1.40 x); in blocks of 10,
 * 1.01-1.14 x with the blocks section alone, 0.88-1.09 x in whole runs.
 */
const BLOCK = 10
/**
 * Runs of the outline per path. A 20 KB outline takes about 10 ms, and its times are widely spread
 * (p10 8 ms, p90 18 ms, shaped by both isolates' collections): with 60 runs the ratio of the same
 * code swung 0.99-1.34 x between runs, with 300 1.01-1.16 x. The 300 cost about 6 s.
 */
const OUTLINE_RUNS = 300

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

interface Samples { ms: number[], cpuMs: number[] }

/** Runs `fn` once and adds its wall-clock and CPU milliseconds to `into`. */
async function sample<T> (into: Samples | null, fn: () => T | Promise<T>): Promise<T> {
  const started = performance.now()
  const cpu = process.cpuUsage()
  const result = await fn()
  const used = process.cpuUsage(cpu)
  into?.ms.push(performance.now() - started)
  into?.cpuMs.push((used.user + used.system) / 1000)
  return result
}

/** Times `plain` and `bounded` in turn, checks they agree, and reports both p50s and their ratio. */
async function comparePaths<T> (report: SectionReport, what: string, runs: number, load: () => string,
  plain: () => T, bounded: () => Promise<T>): Promise<void> {
  const inProcess: Samples = { ms: [], cpuMs: [] }
  const inThread: Samples = { ms: [], cpuMs: [] }
  let expected: T | undefined
  const check = (answer: T): void => {
    expected ??= answer
    if (!isDeepStrictEqual(answer, expected)) throw new Error(`${what}: the worker thread's answer differs from the plain one`)
  }
  await inAlternatingBlocks([
    async timed => { check(await sample(timed ? inProcess : null, plain)) },
    async timed => { check(await sample(timed ? inThread : null, bounded)) }
  ], WARM_UP, runs, BLOCK)
  report.info(`${what} in the request's thread (plain), p50 ${load()}`, median(inProcess.ms), 'ms')
  report.info(`${what} in a worker thread (bounded), p50 ${load()}`, median(inThread.ms), 'ms')
  report.info(`${what}: CPU of the process per call, plain, p50`, median(inProcess.cpuMs), 'ms')
  report.info(`${what}: CPU of the process per call, bounded, p50`, median(inThread.cpuMs), 'ms')
  report.atMost(`${what}: bounded p50 / plain p50`, median(inThread.ms) / median(inProcess.ms), 'x', MAX_RATIO)
}

/**
 * Times the render and the block outline of one body, plain and bounded, and reports the p50s.
 * @param report where the figures go
 * @param body an ordinary Markdown body (about 20 KB)
 * @param runs runs per path of the render
 * @param load the machine's load, for the row names
 */
export async function boundedRenderFigures (report: SectionReport, body: string, runs: number, load: () => string): Promise<void> {
  const opts = { collection: 'posts', id: 'bench' }
  const kb = Math.round(body.length / 1024)
  const renderer = new BoundedRenderer()
  try {
    await comparePaths(report, `${kb} KB body: render`, runs, load,
      () => renderMarkdown(body, opts), async () => await renderer.render(body, opts))
    await comparePaths(report, `${kb} KB body: block list parse (GET /blocks)`, OUTLINE_RUNS, load,
      () => parseOutline(body), async () => await renderer.outline(body, false))
  } finally {
    await renderer.close()
  }
}
