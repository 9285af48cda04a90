/**
 * Writes at each size: `save_field` one at a time and from 8 editors at once on different entries
 * (history and fsync always on), then a lost-update check of every acknowledged save against its
 * file and its history. The last INTEGRITY_IDS posts are left to the integrity section.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { ApiClient, runLoad, type LoadResult } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import type { SectionReport } from './report.js'
import type { GeneratedSite } from './site-generator.js'
import { summarize } from './stats.js'
import { processTreeCpuMs, settled } from './process-cpu.js'
import { targetsFor } from './targets.js'
import { INTEGRITY_IDS } from './integrity-bench.js'

const SEQUENTIAL = 100
const CONCURRENT = 1600
const SAVES_PER_ENTRY = 2
/** Upper bound of each timed run, so a slow server still finishes the bench in minutes. */
const RUN_MAX_MS = 20_000

interface Snapshot { ts: number, action: string, data: { title?: unknown } }

/** Acknowledged title values per entry, in the order they were acknowledged. */
type Acks = Map<string, string[]>

/**
 * Runs the writes section at every size.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function writesBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  for (const entries of ctx.sizes) await savesAt(ctx, report, entries)
}

/**
 * Sequential saves, then two runs of concurrent saves on a plain site of N entries (the same
 * sequence at both sizes; the first concurrent run warms the server up), checked afterwards.
 */
async function savesAt (ctx: BenchContext, report: SectionReport, entries: number): Promise<void> {
  const targets = targetsFor(entries)
  const site = await ctx.sharedSite(entries)
  const ids = site.ids.slice(0, Math.max(0, site.ids.length - INTEGRITY_IDS))
  // The generator may have just written the site (0.5 GB at 100,000 entries): its dirty pages are
  // written back first, or the saves' fsyncs measure the kernel's writeback of the generator's files.
  flushFileSystems()
  const server = await spawnCms(site.dir)
  const acks: Acks = new Map()
  const at = `at ${entries}`
  try {
    const clients = await signIn(server, ctx.concurrency)
    const first = clients[0]!
    await first.get('/entries?collection=posts&pageSize=1')
    // A server may finish its start-up work (an index) in the background after its first answer:
    // saves are measured once it is idle, so the figure is a save's cost, not the start's.
    const settleMs = await settled(server.pid)
    if (settleMs !== null) report.info(`server busy after its first list ${at}`, settleMs / 1000, 's', 'start-up work in the background, its child processes included, before the saves')

    const seqIds = ids.slice(0, Math.min(SEQUENTIAL, ids.length))
    let seq: LoadResult | null = null
    if (seqIds.length > 0) {
      seq = await saveLoad(clients.slice(0, 1), seqIds.length, i => seqIds[i]!, acks)
      const s = summarize(seq.latencies)
      report.info(`save_field sequential saves/s ${at}`, (s.count * 1000) / seq.elapsedMs, '/s', `n=${s.count}`)
      report.info(`save_field sequential p50 / p95 ${at}`, s.p50, 'ms', `p95 ${s.p95.toFixed(1)} ms`)
    }

    // Each task saves entry (i mod E): the two saves of one entry are ~E tasks apart, so concurrent
    // clients always write different entries, and each entry gets two saves (two snapshots). Two
    // pools of entries, interleaved over the whole collection: the first run is the server's
    // warm-up at this concurrency (the JIT still compiles its save path), the second is the judged,
    // sustained rate. Both are checked for lost updates.
    const count = Math.min(CONCURRENT / 2 / SAVES_PER_ENTRY, Math.floor((ids.length - seqIds.length) / 2))
    const stride = Math.max(1, Math.floor((ids.length - seqIds.length) / (2 * count)))
    const spread = Array.from({ length: 2 * count }, (_, k) => ids[seqIds.length + k * stride]!)
    const warmPool = spread.filter((_, k) => k % 2 === 0)
    const pool = spread.filter((_, k) => k % 2 === 1)
    const warm = await saveLoad(clients, warmPool.length * SAVES_PER_ENTRY, i => warmPool[i % warmPool.length]!, acks)
    const w = summarize(warm.latencies)
    report.info(`save_field saves/s, ${ctx.concurrency} clients, first ${w.count} saves ${at}`, (w.count * 1000) / warm.elapsedMs, '/s', `warm-up, not judged: p50 ${w.p50.toFixed(1)}, p95 ${w.p95.toFixed(1)} ms`)
    // The CPU of a save (the server, its threads and git's processes) and the git objects it adds:
    // figures that, unlike wall-clock time, hold on a machine shared with other work.
    const cpuBefore = await processTreeCpuMs(server.pid)
    const objectsBefore = looseObjects(site.dir)
    const conc = await saveLoad(clients, pool.length * SAVES_PER_ENTRY, i => pool[i % pool.length]!, acks)
    const cpuAfter = await processTreeCpuMs(server.pid)
    const c = summarize(conc.latencies)
    if (cpuBefore !== null && cpuAfter !== null && c.count > 0) report.info(`server CPU a save, ${ctx.concurrency} editors ${at}`, (cpuAfter - cpuBefore) / c.count, 'ms', 'server process, its threads and git child processes, in 10 ms ticks')
    if (c.count > 0) report.info(`new git objects a save, ${ctx.concurrency} editors ${at}`, (looseObjects(site.dir) - objectsBefore) / c.count, '', 'loose object files (one fsync each)')
    report.atLeast(`saves per second, ${ctx.concurrency} editors, next ${c.count} saves ${at}`, (c.count * 1000) / conc.elapsedMs, '/s', targets.savesPerSecond, `n=${c.count}`)
    report.atMost(`save p95, ${ctx.concurrency} editors saving at once, ${at}`, c.p95, 'ms', targets.saveP95Ms, `p50 ${c.p50.toFixed(1)}, p99 ${c.p99.toFixed(1)} ms`)
    const errors = conc.errors + warm.errors + (seq?.errors ?? 0)
    if (errors > 0) report.exactly(`save errors ${at}`, errors, 0, conc.firstError ?? warm.firstError ?? seq?.firstError ?? '')

    const check = await lostUpdates(first, site, acks)
    report.exactly(`lost updates (file + history) ${at}`, check.lost, 0, `${check.acked} acknowledged saves${check.example !== null ? `; e.g. ${check.example}` : ''}`)
    const h = summarize(check.historyMs)
    report.info(`history read p50 ${at}`, h.p50, 'ms', `p95 ${h.p95.toFixed(1)} ms, n=${h.count}`)
  } finally {
    await server.stop()
  }
}

/** The number of loose object files of a repository (`git count-objects`). */
function looseObjects (repo: string): number {
  return Number(/^count: (\d+)$/m.exec(execFileSync('git', ['count-objects', '-v'], { cwd: repo, encoding: 'utf8' }))?.[1] ?? 0)
}

/** Writes back every file system's dirty pages (`sync`; nothing where there is no such command). */
function flushFileSystems (): void {
  try { execFileSync('sync', { stdio: 'ignore', timeout: 120_000 }) } catch {}
}

async function signIn (server: CmsProcess, n: number): Promise<ApiClient[]> {
  const clients = Array.from({ length: n }, () => new ApiClient(server.url))
  for (const c of clients) await c.login()
  return clients
}

/**
 * Saves a unique title per task; acknowledged values are recorded per entry.
 */
async function saveLoad (clients: ApiClient[], total: number, idOf: (i: number) => string, acks: Acks): Promise<LoadResult> {
  // Acknowledged saves are recorded as they come, so a run cut short by RUN_MAX_MS still checks out.
  const tag = randomBytes(3).toString('hex')
  return await runLoad(clients.length, total, async (i, w) => {
    const id = idOf(i)
    const value = `bench ${tag} ${i} w${w}`
    const res = await clients[w]!.post<{ ok: boolean, revision: number }>('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value })
    if (res.body.ok !== true) throw new Error(`save_field ${id}: ${JSON.stringify(res.body)}`)
    const list = acks.get(id) ?? []
    list.push(value)
    acks.set(id, list)
    return res.ms
  }, RUN_MAX_MS)
}

/**
 * Checks that every acknowledged save is where it belongs: the last one of an entry in its file,
 * each earlier one in a history snapshot (a snapshot holds the state a save replaced).
 */
async function lostUpdates (client: ApiClient, site: GeneratedSite, acks: Acks): Promise<{ acked: number, lost: number, example: string | null, historyMs: number[] }> {
  let acked = 0
  let lost = 0
  let example: string | null = null
  const historyMs: number[] = []
  for (const [id, values] of acks) {
    acked += values.length
    const file = await readFile(path.join(site.dir, 'content', 'posts', `${id}.md`), 'utf8')
    const last = values[values.length - 1] ?? ''
    if (!file.includes(last)) { lost++; example ??= `${id}: file lacks "${last}"` }
    const res = await client.get<{ history: Snapshot[] }>(`/history?collection=posts&id=${id}`)
    historyMs.push(res.ms)
    const titles = new Set(res.body.history.map(s => s.data?.title))
    for (const v of values.slice(0, -1)) {
      if (!titles.has(v)) { lost++; example ??= `${id}: history lacks "${v}"` }
    }
    const saves = res.body.history.filter(s => s.action === 'save').length
    if (saves < Math.min(values.length, 50)) { lost++; example ??= `${id}: ${saves} save snapshots for ${values.length} saves` }
  }
  return { acked, lost, example, historyMs }
}
