/**
 * Running it for real (issue 33): drafts on the git host after a save (p95, target 5 s); a publish on
 * one instance visible on another within its pull interval plus 1 s; saves per second with and
 * without `metrics.enabled` (target: within 3%). The remote is a bare repository on disk.
 */
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms } from './cms-process.js'
import type { SectionReport } from './report.js'
import { runGit } from './site-generator.js'
import { median, summarize } from './stats.js'
import { processTreeCpuMs } from './process-cpu.js'
import { POLICY } from './publish-bench.js'

const SITE_ENTRIES = 200
const DRAFT_SAMPLES = 12
const PULL_INTERVAL_S = 2
/** Saves in each run of the metrics comparison (about 3 s at 300 a second). */
const SAVES = 1000

async function until (check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms
  while (performance.now() < deadline) {
    if (await check()) return true
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return false
}

const refOf = async (dir: string, ref: string): Promise<string> => (await runGit(dir, 'for-each-ref', '--format=%(objectname)', ref)).trim()

/**
 * Runs the ops section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function opsBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const gitConfig = `git:\n  remote: origin\n  pullInterval: ${PULL_INTERVAL_S}\n`
  const a = await ctx.freshSite(SITE_ENTRIES, POLICY + gitConfig)
  const bare = path.join(path.dirname(a.dir), `${path.basename(a.dir)}-host.git`)
  await runGit(path.dirname(a.dir), 'clone', '--quiet', '--bare', a.dir, bare)
  await runGit(a.dir, 'remote', 'add', 'origin', bare)
  await runGit(a.dir, 'fetch', '--quiet', 'origin')
  const bDir = `${a.dir}-b`
  await runGit(path.dirname(a.dir), 'clone', '--quiet', bare, bDir)
  const first = await spawnCms(a.dir, { CMS_GIT_ON_PUBLISH: 'true' })
  const second = await spawnCms(bDir, { CMS_GIT_ON_PUBLISH: 'true' })
  try {
    const editor = new ApiClient(first.url)
    const { id: editorId } = await editor.login()
    const ids = a.ids.slice(0, DRAFT_SAMPLES)
    const delays: number[] = []
    for (const [i, id] of ids.entries()) {
      await editor.post('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value: `ops draft ${i}` })
      const saved = performance.now()
      const ref = `refs/cms/drafts/${editorId}`
      const local = await refOf(a.dir, ref)
      if (await until(async () => await refOf(bare, ref) === local, 30_000)) delays.push(performance.now() - saved)
    }
    const d = summarize(delays)
    report.atMost('drafts on the git host after a save, p95', d.p95 / 1000, 's', 5, `p50 ${(d.p50 / 1000).toFixed(2)} s, ${delays.length} of ${ids.length} arrived`)

    const result = await editor.post<{ published: unknown[] }>('/publish', {})
    const published = performance.now()
    const reader = new ApiClient(second.url)
    await reader.login()
    const seen = await until(async () => {
      const res = await reader.get<{ entries: Array<{ id: string, data?: { title?: unknown } }> }>(`/entries?collection=posts&q=${encodeURIComponent('ops draft 0')}`)
      return res.body.entries.some(e => e.id === ids[0] && e.data?.title === 'ops draft 0')
    }, 60_000)
    report.atMost(`publish visible on another instance (pullInterval ${PULL_INTERVAL_S} s)`, seen ? (performance.now() - published) / 1000 : Infinity, 's', PULL_INTERVAL_S + 1, `${result.body.published.length} published`)

    // A logout travels like a draft (pushed about a second after it) and is taken in at the other
    // instance's next fetch: within the push delay, the pull interval and a second.
    const onSecond = editor.sameSessionOn(second.url)
    const authenticated = async (): Promise<boolean> => (await onSecond.get<{ authenticated: boolean }>('/auth/session')).body.authenticated
    if (!await authenticated()) throw new Error('the session made on the first instance is not valid on the second')
    await editor.post('/auth/logout', {})
    const loggedOut = performance.now()
    const ended = await until(async () => !await authenticated(), 60_000)
    report.atMost(`logout seen on another instance (pullInterval ${PULL_INTERVAL_S} s)`, ended ? (performance.now() - loggedOut) / 1000 : Infinity, 's', PULL_INTERVAL_S + 2)
    onSecond.close()
  } finally {
    await first.stop()
    await second.stop()
  }

  // The cost of metrics on the save path: the same saves, metrics off then on, alternated three times;
  // medians, since one short run of each varied by 10-15% either way on this machine.
  const rates: Record<'off' | 'on', number[]> = { off: [], on: [] }
  const cpu: Record<'off' | 'on', number[]> = { off: [], on: [] }
  for (const mode of ['off', 'on', 'off', 'on', 'off', 'on'] as const) {
    const site = await ctx.freshSite(SITE_ENTRIES, mode === 'on' ? 'metrics:\n  enabled: true\n' : '')
    const server = await spawnCms(site.dir)
    try {
      const client = new ApiClient(server.url)
      await client.login()
      await client.get('/entries?collection=posts&pageSize=1')
      const cpuBefore = await processTreeCpuMs(server.pid) ?? 0
      const started = performance.now()
      await runLoad(ctx.concurrency, SAVES, async i => (await client.post('/mutate', { type: 'save_field', collection: 'posts', id: site.ids[i % site.ids.length]!, field: 'title', value: `t ${i}` })).ms)
      rates[mode].push(SAVES / ((performance.now() - started) / 1000))
      cpu[mode].push(((await processTreeCpuMs(server.pid) ?? 0) - cpuBefore) / SAVES)
    } finally {
      await server.stop()
    }
  }
  const [off, on] = [median(rates.off), median(rates.on)]
  report.info('saves per second, metrics off', off, '/s', `median of ${rates.off.length}: ${rates.off.map(r => r.toFixed(0)).join(', ')}`)
  report.info('server CPU a save, metrics off / on (medians)', median(cpu.off), 'ms', `${median(cpu.on).toFixed(2)} ms with metrics`)
  report.atMost('cost of metrics.enabled on saves per second', Math.max(0, (off - on) / off * 100), '%', 3, `${on.toFixed(0)} /s with metrics, median of ${rates.on.map(r => r.toFixed(0)).join(', ')}`)
}
