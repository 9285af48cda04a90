/**
 * Reads at each size: the first start (no service state, as on a fresh clone) and restarts with
 * unchanged content, each timed from the process spawn to the first list that answers the whole
 * collection; then list pages and `q` searches one at a time, and the server's RSS after warm-up.
 */
import { readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { inAlternatingBlocks } from './alternating-blocks.js'
import { ApiClient, runLoad } from './api-client.js'
import { type BenchContext, megabytes } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import { forgetServiceState } from './git-checks.js'
import { processTreeCpuMs } from './process-cpu.js'
import type { SectionReport } from './report.js'
import { BODY_WORD, SEARCH_WORD, type GeneratedSite } from './site-generator.js'
import { median, summarize } from './stats.js'
import { targetsFor } from './targets.js'

const RESTARTS = 3
const SAMPLES = 200
const WARM_UP = 300
/** How long the server is left quiet before its RSS is judged. */
const QUIET_MS = 30_000
/** Upper bound of each timed figure, so a slow server still finishes the bench in minutes. */
const FIGURE_MAX_MS = 10_000
const FIRST_LIST_TIMEOUT_MS = 180_000

interface ListBody { entries: Array<{ id: string }>, pagination: { total: number } }

/**
 * Runs the reads section at every size.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function readsBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  for (const entries of ctx.sizes) {
    const site = await ctx.sharedSite(entries)
    await readsAt(ctx, report, site)
  }
}

async function readsAt (ctx: BenchContext, report: SectionReport, site: GeneratedSite): Promise<void> {
  const entries = site.ids.length
  const targets = targetsFor(entries)
  const at = `at ${entries}`
  await forgetServiceState(site.dir)
  let server: CmsProcess | null = null
  try {
    ctx.log(`reads ${at}: first start`)
    const first = await startToFirstList(site.dir, entries)
    server = first.server
    report.atMost(`first start to first list ${at}`, first.ms, 'ms', targets.firstStartMs, `listening after ${first.server.startMs.toFixed(0)} ms; no .git/cms, no refs/cms`)
    await server.stop()
    server = null
    const restarts: number[] = []
    const cpu: Array<{ main: number, all: number }> = []
    for (let i = 0; i < RESTARTS; i++) {
      await server?.stop()
      const run = await startToFirstList(site.dir, entries)
      server = run.server
      restarts.push(run.ms)
      cpu.push(await startCpu(run.server.pid))
    }
    report.atMost(`restart to first list ${at} (median of ${RESTARTS})`, median(restarts), 'ms', targets.restartMs, restarts.map(ms => ms.toFixed(0)).join(', ') + ' ms')
    // CPU spent by then: what a restart costs on a busy machine, where wall-clock time is inflated.
    report.info(`restart CPU to first list, main thread ${at} (median)`, median(cpu.map(c => c.main)), 'ms', `whole process and its git children: ${median(cpu.map(c => c.all)).toFixed(0)} ms (10 ms ticks)`)
    if (server === null) throw new Error('no server')

    const client = new ApiClient(server.url)
    await client.login()
    const pages = Math.max(1, Math.ceil(entries / 24))
    const list = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&page=${1 + ((i * 7919) % pages)}&pageSize=24`)).ms
    const search = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&q=${SEARCH_WORD}&page=${1 + (i % 5)}`)).ms
    const bodySearch = async (): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&q=${BODY_WORD}`)).ms
    const single = async (i: number): Promise<number> => (await client.get<ListBody>(`/entries?collection=posts&id=${site.ids[(i * 104_729) % entries] ?? ''}`)).ms
    const warm = await runLoad(ctx.concurrency, WARM_UP, async i => await [list, search, single][i % 3]!(i), FIGURE_MAX_MS * 3)
    if (warm.errors > 0) throw new Error(`warm-up: ${warm.errors} errors, first: ${warm.firstError ?? ''}`)

    for (const [name, fn] of [['list page of 24 p50', list], [`search q=${SEARCH_WORD} (title word, 1 in 10) p50`, search]] as const) {
      const run = await runLoad(1, SAMPLES, fn, FIGURE_MAX_MS)
      if (run.errors > 0) throw new Error(`${name}: ${run.errors} errors, first: ${run.firstError ?? ''}`)
      const s = summarize(run.latencies)
      report.atMost(`${name} ${at}`, s.p50, 'ms', targets.readP50Ms, `sequential, n=${s.count}, p95 ${s.p95.toFixed(1)} ms`)
    }
    for (const [name, fn] of [[`search q=${BODY_WORD} (body word, 1 in 3) p50`, bodySearch], ['single read (id=) p50', single]] as const) {
      const run = await runLoad(1, SAMPLES / 2, fn, FIGURE_MAX_MS)
      const s = summarize(run.latencies)
      report.info(`${name} ${at}`, s.p50, 'ms', `n=${s.count}, p95 ${s.p95.toFixed(1)} ms${run.errors > 0 ? `, ${run.errors} errors: ${run.firstError ?? ''}` : ''}`)
    }
    await renderFigures(report, server.url, at)
    // Judged at rest: V8 gives back a busy thread's garbage (the render thread's: about 70 MB after
    // these previews) some 20 s after it goes quiet, without any call of ours; the figure at the last
    // request is printed beside it.
    const busy = megabytes(await server.rss())
    await new Promise(resolve => setTimeout(resolve, QUIET_MS))
    report.atMost(`server RSS after warm-up, ${QUIET_MS / 1000} s quiet ${at}`, megabytes(await server.rss()), 'MB', targets.rssMb, `server process only; ${busy.toFixed(0)} MB at the last request, peak so far ${megabytes(await server.peakRss()).toFixed(0)} MB`)
  } finally {
    await server?.stop()
  }
}

/** Renders of a 20 KB body timed per path, after one untimed call of each (31 previews: the RSS row after them counts on that many). */
const RENDER_SAMPLES = 30
/** Calls of one path in a row (alternating-blocks.ts). */
const RENDER_BLOCK = 10

/**
 * A 20 KB body rendered in this process (renderMarkdown, as before the render worker) and through
 * `POST /preview` (the server's worker thread, with its time limit, and HTTP). Printed, not judged:
 * the two run in different processes, and the same render thread behind a bare HTTP server in
 * another process read 2-26% slower than in this one (7 runs, 2026-12-04). The bound's own cost
 * (issue 31: within 10%) is judged in the blocks section, where both paths run in one process.
 */
async function renderFigures (report: SectionReport, url: string, at: string): Promise<void> {
  const paragraph = 'A paragraph with *emphasis*, a [link](https://example.com) and `code`, as posts have.\n\n'
  const body = '# Title\n\n' + paragraph.repeat(Math.ceil(20_000 / paragraph.length))
  const { renderMarkdown } = await import('../lib/content/markdown/index.js')
  // A new connection: the list client's kept-alive one may have timed out during the runs before.
  const client = new ApiClient(url)
  await client.login()
  const direct: number[] = []
  const previews: number[] = []
  const inProcess = async (timed: boolean): Promise<void> => {
    const started = performance.now()
    renderMarkdown(body, { collection: 'posts', id: 'bench' })
    if (timed) direct.push(performance.now() - started)
  }
  const preview = async (timed: boolean): Promise<void> => {
    const { ms } = await client.post('/preview', { body, collection: 'posts', id: 'bench' })
    if (timed) previews.push(ms)
  }
  await inProcess(false)
  await preview(false)
  await inAlternatingBlocks([inProcess, preview], 0, RENDER_SAMPLES, RENDER_BLOCK)
  client.close()
  const inProcessP50 = median(direct)
  report.info(`render of a 20 KB body in process p50 ${at}`, inProcessP50, 'ms', `renderMarkdown, n=${direct.length}`)
  const previewP50 = median(previews)
  report.info(`render of a 20 KB body through POST /preview p50 ${at}`, previewP50, 'ms', `worker thread with time limit, HTTP included: ${(previewP50 / inProcessP50).toFixed(2)} x in process`)
}

/**
 * The CPU a server process has used so far: its main thread, and every thread with its live git
 * child processes (Linux /proc; 0 elsewhere).
 * @param pid the server process
 * @returns milliseconds
 */
async function startCpu (pid: number): Promise<{ main: number, all: number }> {
  try {
    const stat = await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8')
    // utime and stime, in ticks of 10 ms, are the 12th and 13th fields after the command name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { main: (Number(fields[11]) + Number(fields[12])) * 10, all: (await processTreeCpuMs(pid)) ?? 0 }
  } catch {
    return { main: 0, all: 0 }
  }
}

/**
 * Spawns the server and times spawn -> the first list answered with the whole collection's total
 * (a server may answer before its index is complete; that is not yet a list).
 */
async function startToFirstList (dir: string, expected: number): Promise<{ ms: number, server: CmsProcess }> {
  const started = performance.now()
  const server = await spawnCms(dir)
  try {
    const client = new ApiClient(server.url)
    await client.login()
    const deadline = started + FIRST_LIST_TIMEOUT_MS
    let last = ''
    while (performance.now() < deadline) {
      try {
        const res = await client.get<ListBody>('/entries?collection=posts&page=1&pageSize=24')
        if (res.body.pagination.total === expected && res.body.entries.length > 0) return { ms: performance.now() - started, server }
        last = `total ${res.body.pagination.total}, expected ${expected}`
      } catch (err) {
        last = err instanceof Error ? err.message : String(err)
      }
      await new Promise(resolve => setTimeout(resolve, 20))
    }
    throw new Error(`no complete list after ${FIRST_LIST_TIMEOUT_MS} ms: ${last}`)
  } catch (err) {
    await server.stop()
    throw err
  }
}
