/**
 * Side by side with decap-server, Decap CMS's local git backend, each on its own clone of the same
 * site of N posts and both in their editorial mode: git-cms under a permissions policy (every save
 * is a draft on the editor's ref, POST /publish publishes them in one commit), decap-server with
 * its editorial workflow (every save of an entry is a commit on a branch of its own,
 * publishUnpublishedEntry merges one branch). The same workload against each, one server at a time:
 * lists, reads, 8 editors saving, one editor publishing its drafted entries. Reported: p50/p95 of
 * each operation, errors, and the peak RSS of each server process against the 2/3 target.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad, type LoadResult } from './api-client.js'
import { type BenchContext, megabytes } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import { DecapClient, spawnDecap } from './decap-process.js'
import { POLICY, type PublishBody } from './publish-bench.js'
import type { SectionReport } from './report.js'
import { summarize } from './stats.js'
import { PEAK_RSS_SHARE_OF_DECAP } from './targets.js'

const LISTS = 30
const READS = 100
/** Saves per editor (each on an entry of its own). */
const SAVES_PER_EDITOR = 20
/** Upper bound of each phase, so a slow server still finishes the bench in minutes. */
const PHASE_MAX_MS = 30_000

/** One system under the workload. */
interface Side {
  name: string
  server: CmsProcess
  /** What a list is on this side, in words. */
  listIs: string
  list: () => Promise<number>
  read: (id: string) => Promise<number>
  /** Saves a new title on an entry as editor `w`. */
  save: (w: number, id: string, title: string) => Promise<number>
  /** Publishes the entries editor 0 saved; resolves to the number published. */
  publish: (ids: string[]) => Promise<number>
  close: () => void
}

/**
 * Runs the side-by-side section at the smallest size.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function sideBySideBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const entries = ctx.entries
  const peaks: Record<string, number> = {}
  for (const start of [gitCmsSide, decapSide]) {
    const site = await ctx.freshSite(entries, POLICY)
    const side = await start(site.dir, ctx.concurrency)
    try {
      ctx.log(`side by side: ${side.name}`)
      await workload(ctx, report, side, site.ids)
      peaks[side.name] = await side.server.peakRss()
      report.info(`${side.name}: peak RSS over the workload`, megabytes(peaks[side.name]!), 'MB', `RSS at the end ${megabytes(await side.server.rss()).toFixed(0)} MB; server process only (not its git children)`)
    } finally {
      side.close()
      await side.server.stop()
    }
  }
  const ours = peaks['git-cms'] ?? NaN
  const theirs = peaks['decap-server'] ?? NaN
  report.check('peak RSS, git-cms / decap-server', ours / theirs, 'x', `<= ${PEAK_RSS_SHARE_OF_DECAP.toFixed(2)} x`, ours / theirs <= PEAK_RSS_SHARE_OF_DECAP)
}

async function workload (ctx: BenchContext, report: SectionReport, side: Side, ids: string[]): Promise<void> {
  const row = (what: string, run: LoadResult): void => {
    const s = summarize(run.latencies)
    report.info(`${side.name}: ${what} p50`, s.p50, 'ms', `p95 ${s.p95.toFixed(1)} ms, n=${s.count}${run.errors > 0 ? `, ${run.errors} errors: ${run.firstError ?? ''}` : ''}`)
  }
  row(`list (${side.listIs})`, await runLoad(1, LISTS, side.list, PHASE_MAX_MS))
  row('read one entry', await runLoad(1, READS, async i => await side.read(ids[(i * 7919) % ids.length]!), PHASE_MAX_MS))

  // Editor w saves entries w, w + 8, w + 16 ... of the first 8 x 20: never the same entry as another.
  const tag = randomBytes(3).toString('hex')
  const saved: string[] = []
  const saves = await runLoad(ctx.concurrency, ctx.concurrency * SAVES_PER_EDITOR, async (i, w) => {
    const id = ids[w + ctx.concurrency * Math.floor(i / ctx.concurrency)]!
    const ms = await side.save(w, id, `side ${tag} ${id}`)
    if (w === 0) saved.push(id)
    return ms
  }, PHASE_MAX_MS)
  row(`save, ${ctx.concurrency} editors at once`, saves)
  report.info(`${side.name}: saves per second, ${ctx.concurrency} editors`, (saves.latencies.length * 1000) / saves.elapsedMs, '/s')

  const started = performance.now()
  const published = await side.publish(saved)
  report.info(`${side.name}: publish the ${saved.length} entries one editor saved`, performance.now() - started, 'ms', `${published} published`)
}

async function gitCmsSide (dir: string, concurrency: number): Promise<Side> {
  const server = await spawnCms(dir, { CMS_GIT_ON_PUBLISH: 'true' })
  const editors = Array.from({ length: concurrency }, () => new ApiClient(server.url))
  for (const e of editors) await e.login()
  const first = editors[0]!
  let page = 0
  return {
    name: 'git-cms',
    server,
    listIs: 'a page of 24',
    list: async () => (await first.get(`/entries?collection=posts&page=${1 + (page++ % 20)}&pageSize=24`)).ms,
    read: async id => (await first.get(`/entries?collection=posts&id=${id}`)).ms,
    save: async (w, id, title) => (await editors[w]!.post('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value: title })).ms,
    publish: async () => (await first.post<PublishBody>('/publish', {})).body.published.length,
    close: () => { for (const e of editors) e.close() }
  }
}

async function decapSide (dir: string, concurrency: number): Promise<Side> {
  const server = await spawnDecap(dir)
  const editors = Array.from({ length: concurrency }, () => new DecapClient(server.url))
  const first = editors[0]!
  const pathOf = (id: string): string => `content/posts/${id}.md`
  return {
    name: 'decap-server',
    server,
    listIs: 'entriesByFolder: every entry, as its UI asks',
    list: async () => (await first.action('entriesByFolder', { folder: 'content/posts', extension: 'md', depth: 1 })).ms,
    read: async id => (await first.action('getEntry', { path: pathOf(id) })).ms,
    save: async (w, id, title) => {
      // The file as Decap's UI sends it: the whole text, with the new title (read before timing).
      const raw = (await readFile(path.join(dir, pathOf(id)), 'utf8')).replace(/^title: .*$/m, `title: ${title}`)
      const started = performance.now()
      await editors[w]!.action('persistEntry', {
        dataFiles: [{ slug: id, path: pathOf(id), raw }],
        assets: [],
        options: { collectionName: 'posts', commitMessage: `Update ${id}`, useWorkflow: true, status: 'draft' }
      })
      return performance.now() - started
    },
    publish: async ids => {
      let published = 0
      for (const slug of ids) {
        await first.action('publishUnpublishedEntry', { collection: 'posts', slug })
        published++
      }
      return published
    },
    close: () => { for (const e of editors) e.close() }
  }
}
