/**
 * Full-text search (issue 17 item 4; issue 18 at scale): `q` over a site of 10,000 and of 100,000
 * Markdown posts (BENCH_SCALE_ENTRIES overrides the larger), their latency for a title word, a
 * body-only word, a rare word, two words and a prefix, the time from listening to the first
 * answered `q` (collection index, then full-text index built in the background), the same after a
 * restart (the full-text index loaded from `.git/cms/search/`), the server's RSS after warm-up, and
 * the index's own size (built in this process from the same files: its typed
 * arrays and the heap it adds).
 */
import { existsSync } from 'node:fs'
import { rename, rm, stat, writeFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import path from 'node:path'
import { ApiClient, runLoad } from './api-client.js'
import { BenchContext, megabytes } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import type { SectionReport } from './report.js'
import { BODY_WORD, RARE_WORD, SEARCH_WORD, VOCABULARY, generateSite, postId, type GeneratedSite } from './site-generator.js'
import { summarize } from './stats.js'

const SAMPLES = 100
const FIGURE_MAX_MS = 8000
/** `q` p50 target (ms), at every scale. */
const Q_P50_MS = 20

interface ListBody { entries: Array<{ id: string, snippet?: unknown }>, pagination: { total: number } }

/**
 * Runs the search section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function searchBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const large = Number(process.env.BENCH_SCALE_ENTRIES ?? '') > 0 ? Number(process.env.BENCH_SCALE_ENTRIES) : 100_000
  for (const [entries, rssTarget] of [[10_000, 150], [large, 200]] as const) {
    const started = performance.now()
    const site = entries > 10_000 ? await cachedSite(ctx, entries) : await ctx.plainSite(entries)
    report.info(`${entries}: generate site (or reuse one)`, performance.now() - started, 'ms')
    await measureScale(ctx, report, site, entries, rssTarget)
  }
}

/** Bump when the generator's output changes: a cached site of another version is generated again. */
const SITE_VERSION = 1

/**
 * A big plain site: with BENCH_DIR, kept there between runs (`git-cms-search-site-<n>-v<version>`,
 * generated once: 100,000 files take minutes); without it, this run's shared site.
 */
async function cachedSite (ctx: BenchContext, entries: number): Promise<GeneratedSite> {
  const root = process.env.BENCH_DIR
  if (root === undefined || root === '') return await ctx.plainSite(entries)
  const dir = path.join(root, `git-cms-search-site-${entries}-v${SITE_VERSION}`)
  const marker = path.join(dir, '.git', 'bench-site-complete')
  if (!existsSync(marker)) {
    ctx.log(`generating a site of ${entries} posts into ${dir} (kept for the next runs)`)
    const site = await generateSite({ entries })
    await rm(dir, { recursive: true, force: true })
    await rename(site.dir, dir)
    await writeFile(marker, '')
  }
  return { dir, ids: Array.from({ length: entries }, (_, i) => postId(i)), remove: async () => {} }
}

async function measureScale (ctx: BenchContext, report: SectionReport, site: GeneratedSite, entries: number, rssTarget: number): Promise<void> {
  const label = (s: string): string => `${entries}: ${s}`
  let server: CmsProcess | null = null
  try {
    server = await spawnCms(site.dir)
    const client = new ApiClient(server.url)
    await client.login()
    const listenedAt = performance.now()
    const first = await client.get<ListBody>('/entries?collection=posts&page=1&pageSize=24')
    report.info(label('first list after start'), first.ms, 'ms')
    const firstQ = await client.get<ListBody>(`/entries?collection=posts&q=${BODY_WORD}`)
    report.info(label('first q answered, from listening (index builds in the background)'), performance.now() - listenedAt, 'ms', `${firstQ.body.pagination.total} matches`)

    const queries: Array<[string, string]> = [
      ['title word', SEARCH_WORD],
      ['body-only word', BODY_WORD],
      ['rare word', RARE_WORD],
      ['two words', `${BODY_WORD} ${VOCABULARY[1] ?? ''}`],
      ['prefix', BODY_WORD.slice(0, 5)]
    ]
    const q = async (text: string): Promise<Timed> => await client.get<ListBody>(`/entries?collection=posts&q=${encodeURIComponent(text)}`)
    // Warm-up: every query a few dozen times with concurrent clients.
    await runLoad(ctx.concurrency, 200, async i => (await q((queries[i % queries.length] as [string, string])[1])).ms, FIGURE_MAX_MS)
    for (const [name, text] of queries) {
      const matches = (await q(text)).body.pagination.total
      const run = await runLoad(1, SAMPLES, async () => (await q(text)).ms, FIGURE_MAX_MS)
      if (run.errors > 0) throw new Error(`${name}: ${run.errors} errors, first: ${run.firstError ?? ''}`)
      const s = summarize(run.latencies)
      report.atMost(label(`q ${name} p50`), s.p50, 'ms', Q_P50_MS, `q=${text}, ${matches} matches, p95 ${s.p95.toFixed(1)} ms, n=${s.count}`)
    }
    const shortPrefix = VOCABULARY[0]?.slice(0, 2) ?? 'ka'
    const short = await runLoad(1, 20, async () => (await q(shortPrefix)).ms, FIGURE_MAX_MS)
    report.info(label('q two-letter prefix p50 (worst case)'), summarize(short.latencies).p50, 'ms', `q=${shortPrefix}, ${(await q(shortPrefix)).body.pagination.total} matches`)
    report.atMost(label('server RSS after warm-up, full-text index built'), megabytes(await server.rss()), 'MB', rssTarget, 'server process only')
    client.close()
  } finally {
    await server?.stop()
  }
  await restartFigures(report, site, label)
  await indexOwnSize(report, site, label)
}

/**
 * Starts the server again over the same site (its full-text index persisted by the run before):
 * the time from listening to the first answered `q`, next to the cold figure above.
 */
async function restartFigures (report: SectionReport, site: GeneratedSite, label: (s: string) => string): Promise<void> {
  let server: CmsProcess | null = null
  try {
    server = await spawnCms(site.dir)
    const client = new ApiClient(server.url)
    await client.login()
    const listenedAt = performance.now()
    const first = await client.get<ListBody>('/entries?collection=posts&page=1&pageSize=24')
    report.info(label('first list after restart (persisted collection index)'), first.ms, 'ms')
    const firstQ = await client.get<ListBody>(`/entries?collection=posts&q=${BODY_WORD}`)
    report.info(label('first q after restart (persisted index), from listening'), performance.now() - listenedAt, 'ms', `${firstQ.body.pagination.total} matches; the q itself ${firstQ.ms.toFixed(0)} ms`)
    report.info(label('server RSS after restart and first q (persisted index)'), megabytes(await server.rss()), 'MB')
    client.close()
  } finally {
    await server?.stop()
  }
}

type Timed = Awaited<ReturnType<ApiClient['get']>> & { body: ListBody }

/** The size of the persisted full-text database (`.git/cms/fts/posts.sqlite`, WAL included). */
async function indexOwnSize (report: SectionReport, site: GeneratedSite, label: (s: string) => string): Promise<void> {
  const file = path.join(site.dir, '.git', 'cms', 'fts', 'posts.sqlite')
  let bytes = 0
  for (const suffix of ['', '-wal']) bytes += await stat(file + suffix).then(st => st.size, () => 0)
  report.info(label('full-text database on disk'), megabytes(bytes), 'MB')
}
