/**
 * Scale (issue 18): start-up and memory of `git-cms serve` at 10,000 and 100,000 Markdown entries
 * (the larger count from BENCH_SCALE_ENTRIES, for quick runs), and over 1,000 collections of 100
 * entries. Each start is timed from the process spawn to the first successful list answer: a cold
 * start (no `.git/cms` state, as on a fresh clone: the index is built from every file) and restarts
 * with unchanged content (the persisted index is validated against the working tree).
 *
 * With BENCH_DIR set, the generated sites stay there between runs (`git-cms-scale-*`); otherwise
 * they are generated once per run in the temp directory and removed at the end.
 */
import { access, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad } from './api-client.js'
import { BenchContext, megabytes } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import type { SectionReport } from './report.js'
import { collectionName, generateSite, postId, SEARCH_WORD, type SiteOptions } from './site-generator.js'
import { median, summarize } from './stats.js'
import { processCpuMs } from './process-cpu.js'
import { readEveryFile } from './read-every-file.js'

const RESTARTS = 3
const SAMPLES = 300
const FIGURE_MAX_MS = 8000
const FIRST_LIST_TIMEOUT_MS = 120_000

/** The targets of issue 18, by entry count. */
/** How long the measured server is left idle before its RSS is read a second time. */
const IDLE_RSS_MS = 20_000

interface Targets { cold: number, restart: number, rss: number, list: number }
const SMALL: Targets = { cold: 6000, restart: 300, rss: 150, list: 5 }
const LARGE: Targets = { cold: 6000, restart: 1000, rss: 200, list: 5 }

interface ListBody { entries: Array<{ id: string }>, pagination: { total: number } }

/**
 * Runs the scale section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function scaleBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const large = positiveInt(process.env.BENCH_SCALE_ENTRIES, 100_000)
  for (const entries of [10_000, large]) {
    const dir = await scaleSite(ctx, report, { entries })
    await startFigures(ctx, report, dir, `${entries} entries`, ['posts'], entries, entries >= 100_000 ? LARGE : SMALL)
  }
  const collections = 1000
  const perCollection = Math.max(1, Math.floor(large / collections))
  const dir = await scaleSite(ctx, report, { entries: collections * perCollection, collections })
  const names = Array.from({ length: collections }, (_, i) => collectionName(i))
  await startFigures(ctx, report, dir, `${collections} collections x ${perCollection}`, names, perCollection, LARGE)
}

/** A generated site: kept under BENCH_DIR between runs, else a temporary one for this run. */
async function scaleSite (ctx: BenchContext, report: SectionReport, opts: SiteOptions): Promise<string> {
  const name = `git-cms-scale-${opts.entries}${opts.collections !== undefined ? `-c${opts.collections}` : ''}`
  const keep = process.env.BENCH_DIR
  const started = performance.now()
  if (keep === undefined) {
    ctx.log(`generating ${name}`)
    const site = await ctx.site(opts)
    report.info(`generate ${name} (fs + one git commit)`, performance.now() - started, 'ms')
    return site.dir
  }
  const dir = path.join(keep, name)
  const done = path.join(dir, '.git', 'bench-site-complete')
  if (await access(done).then(() => true, () => false)) return dir
  ctx.log(`generating ${dir}`)
  await rm(dir, { recursive: true, force: true })
  await generateSite({ ...opts, dir })
  await writeFile(done, '')
  report.info(`generate ${name} (fs + one git commit, kept)`, performance.now() - started, 'ms')
  return dir
}

/** Cold start, restarts, warm-up RSS and list latency over one site. */
async function startFigures (ctx: BenchContext, report: SectionReport, dir: string, label: string, collections: string[], perCollection: number, targets: Targets): Promise<void> {
  // A fresh clone: no service state at all (revision logs, persisted indexes).
  await rm(path.join(dir, '.git', 'cms'), { recursive: true, force: true })
  // A fresh clone's files are in the page cache (its checkout just wrote them): so are these.
  await readEveryFile(dir)
  let server: CmsProcess | null = null
  try {
    const cold = await startToFirstList(dir, collections[0] ?? 'posts', perCollection)
    server = cold.server
    report.atMost(`${label}: cold start to first list`, cold.ms, 'ms', targets.cold, 'no .git/cms state')
    // CPU time varies less than wall time on a shared machine: what the start itself cost.
    if (cold.cpuMs !== null) report.info(`${label}: of which server CPU (user + system, all threads)`, cold.cpuMs, 'ms')
    await server.stop()
    server = null
    const restarts: number[] = []
    const listening: number[] = []
    for (let i = 0; i < RESTARTS; i++) {
      const run = await startToFirstList(dir, collections[(i * 499) % collections.length] ?? 'posts', perCollection)
      restarts.push(run.ms)
      listening.push(run.server.startMs)
      if (i < RESTARTS - 1) await run.server.stop()
      else server = run.server
    }
    report.atMost(`${label}: restart, unchanged content, to first list (median of ${RESTARTS})`, median(restarts), 'ms', targets.restart, restarts.map(ms => ms.toFixed(0)).join(', ') + ' ms')
    // The part of a start that is not the index: the process up to its listening line.
    report.info(`${label}: of which spawn to the listening line (median)`, median(listening), 'ms')
    if (server === null) throw new Error('no server')
    const client = new ApiClient(server.url)
    await client.login()
    const pages = Math.max(1, Math.ceil(perCollection / 24))
    // Entry k of collection c is post number c + k * (number of collections).
    const c = (i: number): number => (i * 7919) % collections.length
    const collectionOf = (i: number): string => collections[c(i)] ?? 'posts'
    const list = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=${collectionOf(i)}&page=${1 + ((i * 7919) % pages)}&pageSize=24`)).ms
    const single = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=${collectionOf(i)}&id=${postId(c(i) + ((i * 104729) % perCollection) * collections.length)}`)).ms
    const search = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=${collectionOf(i)}&q=${SEARCH_WORD}`)).ms
    // Warm-up: every collection's index built, and each kind of request a few hundred times.
    await runLoad(ctx.concurrency, collections.length > 1 ? collections.length : 1, async i => (await client.get<ListBody>(`/entries?collection=${collections[i] ?? 'posts'}&pageSize=1`)).ms, 600_000)
    const warm = await runLoad(ctx.concurrency, 300, async i => await [list, single, search][i % 3]!(i), FIGURE_MAX_MS)
    if (warm.errors > 0) throw new Error(`${label}: warm-up: ${warm.errors} errors, first: ${warm.firstError ?? ''}`)
    const run = await runLoad(1, SAMPLES, list, FIGURE_MAX_MS)
    if (run.errors > 0) throw new Error(`${label}: list: ${run.errors} errors, first: ${run.firstError ?? ''}`)
    const s = summarize(run.latencies)
    report.atMost(`${label}: list page of 24 p50`, s.p50, 'ms', targets.list, `sequential, n=${s.count}, p95 ${s.p95.toFixed(1)} ms`)
    report.atMost(`${label}: server RSS after warm-up`, megabytes(await server.rss()), 'MB', targets.rss, 'server process only')
    // The same server left idle: V8's memory reducer shrinks the heap some seconds after the load
    // ends (its young generation and the old generation's garbage). Printed beside the target's
    // figure, which is taken at once and stays the one judged.
    await new Promise(resolve => setTimeout(resolve, IDLE_RSS_MS))
    report.info(`${label}: server RSS ${IDLE_RSS_MS / 1000} s later, idle`, megabytes(await server.rss()), 'MB')
  } finally {
    await server?.stop()
  }
}

/** Spawns the server and times spawn -> first successful list answer of one collection. */
async function startToFirstList (dir: string, collection: string, expected: number): Promise<{ ms: number, cpuMs: number | null, server: CmsProcess }> {
  const started = performance.now()
  const server = await spawnCms(dir)
  try {
    const client = new ApiClient(server.url)
    await client.login()
    const deadline = started + FIRST_LIST_TIMEOUT_MS
    for (;;) {
      try {
        const res = await client.get<ListBody>(`/entries?collection=${collection}&page=1&pageSize=24`)
        const ms = performance.now() - started
        const cpuMs = await processCpuMs(server.pid)
        if (res.body.pagination.total !== expected) throw new Error(`list total ${res.body.pagination.total}, expected ${expected}`)
        return { ms, cpuMs, server }
      } catch (err) {
        if (performance.now() > deadline || (err instanceof Error && err.message.startsWith('list total'))) throw err
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    }
  } catch (err) {
    await server.stop()
    throw err
  }
}

function positiveInt (value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`BENCH_SCALE_ENTRIES must be a positive integer, got '${value}'`)
  return Number(value)
}
