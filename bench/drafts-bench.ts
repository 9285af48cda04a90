/**
 * Drafts and publish (issue 5): under a permissions policy every edit goes to the editor's draft
 * ref. Concurrent draft saves from one editor (one cookie, several connections), a check that every
 * acknowledged draft is on the ref, then publishing 100 and 1,000 drafts in one request each with
 * CMS_GIT_ON_PUBLISH=true, and a look at the commit each made.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms, type CmsProcess } from './cms-process.js'
import type { SectionReport } from './report.js'
import { runGit, type GeneratedSite } from './site-generator.js'
import { summarize } from './stats.js'

const POLICY = 'permissions:\n  editor: [\'*\']\n'

interface EntryBody { entries: Array<{ id: string, draft?: boolean, data?: { title?: unknown } }> }
interface PublishBody {
  ok: boolean
  published: unknown[]
  conflicts: unknown[]
  failed: unknown[]
  commit?: string
  commitError?: string
}

/**
 * Runs the drafts and publish section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function draftsBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const small = Math.min(100, Math.floor(ctx.entries / 10))
  const large = Math.min(1000, ctx.entries - small)
  ctx.log(`drafts: generating ${ctx.entries} posts`)
  const site = await ctx.site({ entries: ctx.entries, extraConfig: POLICY })
  const server = await spawnCms(site.dir, { CMS_GIT_ON_PUBLISH: 'true' })
  try {
    await draftsThenPublish(ctx, report, server, site, site.ids.slice(0, small), false)
    await draftsThenPublish(ctx, report, server, site, site.ids.slice(small, small + large), true)
  } finally {
    await server.stop()
  }
}

/**
 * One editor saves a draft of each id with concurrent connections, the drafts are checked, then
 * published in one request. Draft throughput is reported for the larger batch only.
 */
async function draftsThenPublish (ctx: BenchContext, report: SectionReport, server: CmsProcess, site: GeneratedSite, ids: string[], reportSaves: boolean): Promise<void> {
  const n = ids.length
  const editor = new ApiClient(server.url)
  await editor.login()
  await editor.get('/entries?collection=posts&pageSize=1')
  const tag = randomBytes(3).toString('hex')
  const valueOf = (id: string): string => `draft ${tag} ${id}`
  const acked = new Set<string>()
  const run = await runLoad(ctx.concurrency, n, async i => {
    const id = ids[i]!
    const res = await editor.post<{ ok: boolean }>('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value: valueOf(id) })
    if (res.body.ok !== true) throw new Error(`save_field ${id}: ${JSON.stringify(res.body)}`)
    acked.add(id)
    return res.ms
  })
  if (run.errors > 0) report.exactly(`draft save errors (of ${n})`, run.errors, 0, run.firstError ?? '')
  if (reportSaves) {
    const s = summarize(run.latencies)
    report.atLeast(`draft saves/s, ${ctx.concurrency} connections, one editor`, (s.count * 1000) / run.elapsedMs, '/s', 200, `n=${s.count}`)
    report.info('draft save p50 / p95', s.p50, 'ms', `p95 ${s.p95.toFixed(1)} ms`)
  }

  // Every acknowledged draft must be on the editor's ref and visible to that editor.
  const status = await editor.get<{ count: number }>('/draft')
  let lost = 0
  let example: string | null = null
  for (const id of acked) {
    const res = await editor.get<EntryBody>(`/entries?collection=posts&id=${id}`)
    const entry = res.body.entries[0]
    if (entry?.draft !== true || entry.data?.title !== valueOf(id)) { lost++; example ??= `${id}: ${JSON.stringify({ draft: entry?.draft, title: entry?.data?.title })}` }
  }
  report.exactly(`lost drafts (of ${acked.size} acknowledged)`, lost, 0,
    `GET /draft count ${status.body.count}${example !== null ? `; e.g. ${example}` : ''}`, lost === 0 && status.body.count === acked.size)

  const started = performance.now()
  const pub = await editor.post<PublishBody>('/publish', {})
  const ms = performance.now() - started
  const done = pub.body.published.length
  const note = `${done} published, ${pub.body.conflicts.length} conflicts, ${pub.body.failed.length} failed`
  if (reportSaves) report.atMost(`publish ${n} drafts (one request)`, ms, 'ms', 3000, note)
  else report.info(`publish ${n} drafts (one request)`, ms, 'ms', note)

  let files = 0
  if (pub.body.commit !== undefined) {
    const out = await runGit(site.dir, 'show', '--name-only', '--format=', pub.body.commit)
    files = out.split('\n').filter(line => line.trim() !== '').length
  }
  let onDisk = 0
  for (const id of acked) {
    if ((await readFile(path.join(site.dir, 'content', 'posts', `${id}.md`), 'utf8')).includes(valueOf(id))) onDisk++
  }
  const commitNote = pub.body.commit !== undefined ? `commit ${pub.body.commit.slice(0, 10)}` : `no commit: ${pub.body.commitError ?? 'absent'}`
  report.exactly(`publish ${n}: files in commit`, files, acked.size, commitNote, files === acked.size && done === acked.size)
  report.exactly(`publish ${n}: published values in files`, onDisk, acked.size)
}
