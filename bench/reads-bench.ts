/**
 * Reads (issue 3): cold start of `git-cms serve` over a site of N Markdown posts, then list pages,
 * `q` searches and single reads over HTTP, their latency one at a time and their throughput with
 * concurrent clients, and the server's RSS after warm-up.
 */
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad, runFor } from './api-client.js'
import { BenchContext, megabytes } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import type { SectionReport } from './report.js'
import { SEARCH_WORD, type GeneratedSite } from './site-generator.js'
import { summarize, median } from './stats.js'

const COLD_STARTS = 3
const SAMPLES = 300
const THROUGHPUT_MS = 5000
/** Upper bound of each timed figure, so a slow server still finishes the bench in minutes. */
const FIGURE_MAX_MS = 8000

interface ListBody { entries: Array<{ id: string }>, pagination: { total: number, totalPages: number } }

/**
 * Runs the reads section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function readsBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const genStarted = performance.now()
  const site = await ctx.plainSite(ctx.entries)
  report.info('generate site (fs + one git commit)', performance.now() - genStarted, 'ms')
  await coldStartsAndReads(ctx, report, site)
}

/**
 * Runs the reads figures over a nested, bundled layout (issue 14): Hugo-style page bundles in year
 * folders, `content/posts/<yyyy>/<name>/index.md` with images beside some, `indexFile: index`.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function bundledReadsBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const genStarted = performance.now()
  const site = await ctx.site({ entries: ctx.entries, layout: 'bundles' })
  report.info('generate site (fs + one git commit)', performance.now() - genStarted, 'ms')
  await coldStartsAndReads(ctx, report, site)
}

async function coldStartsAndReads (ctx: BenchContext, report: SectionReport, site: GeneratedSite): Promise<void> {
  const starts: number[] = []
  let server: CmsProcess | null = null
  try {
    for (let i = 0; i < COLD_STARTS; i++) {
      await server?.stop()
      server = await spawnCms(site.dir)
      starts.push(server.startMs)
    }
    report.atMost('cold start to listening (1st, no state)', starts[0] ?? NaN, 'ms', 1500)
    report.atMost(`cold start to listening (median of ${COLD_STARTS})`, median(starts), 'ms', 1500, starts.map(ms => ms.toFixed(0)).join(', ') + ' ms')
    if (server === null) throw new Error('no server')
    await measureReads(ctx, report, server, site)
  } finally {
    await server?.stop()
  }
}

async function measureReads (ctx: BenchContext, report: SectionReport, server: CmsProcess, site: GeneratedSite): Promise<void> {
  report.info('server RSS at listening (before indexing)', megabytes(await server.rss()), 'MB')
  const client = new ApiClient(server.url)
  await client.login()
  const pages = Math.max(1, Math.ceil(site.ids.length / 24))

  // The service indexes content after it starts listening: the first list pays for the index.
  const first = await client.get<ListBody>('/entries?collection=posts&page=1&pageSize=24')
  report.info('first list after start (index build)', first.ms, 'ms')
  if (first.body.pagination.total !== site.ids.length) {
    report.exactly('list total', first.body.pagination.total, site.ids.length)
  }

  const list = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&page=${1 + ((i * 7919) % pages)}&pageSize=24`)).ms
  const search = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&q=${encodeURIComponent(i % 2 === 0 ? SEARCH_WORD : `${SEARCH_WORD} ${i % 10}`)}`)).ms
  const single = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&id=${encodeURIComponent(site.ids[(i * 7919) % site.ids.length] ?? '')}`)).ms

  // Warm-up: every kind of request a few dozen times before anything is timed.
  await runLoad(ctx.concurrency, 200, async i => await [list, search, single][i % 3]!(i), FIGURE_MAX_MS)

  for (const [name, fn, max] of [['list page of 24', list, 5], ['q search', search, 20], ['single read (id=)', single, 2]] as const) {
    const run = await runLoad(1, SAMPLES, fn, FIGURE_MAX_MS)
    if (run.errors > 0) throw new Error(`${name}: ${run.errors} errors, first: ${run.firstError ?? ''}`)
    const s = summarize(run.latencies)
    report.atMost(`${name} p50`, s.p50, 'ms', max, `sequential, n=${s.count}`)
    report.info(`${name} p95 / p99`, s.p95, 'ms', `p99 ${s.p99.toFixed(1)} ms`)
  }

  const mixed = await runFor(ctx.concurrency, THROUGHPUT_MS, async i => await [list, list, single, single, search][i % 5]!(i))
  if (mixed.errors > 0) throw new Error(`mixed reads: ${mixed.errors} errors, first: ${mixed.firstError ?? ''}`)
  const m = summarize(mixed.latencies)
  report.info(`requests/s, ${ctx.concurrency} clients (2 list:2 id:1 q)`, (m.count * 1000) / mixed.elapsedMs, '/s', `n=${m.count}`)
  report.info(`  mixed latency p50 / p95 / p99`, m.p50, 'ms', `p95 ${m.p95.toFixed(1)}, p99 ${m.p99.toFixed(1)} ms`)
  report.atMost(`server RSS after warm-up (${ctx.entries} entries)`, megabytes(await server.rss()), 'MB', 150, 'server process only')
}
