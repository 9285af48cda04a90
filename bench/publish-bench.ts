/**
 * Publish at the smallest size: under a permissions policy every edit goes to the editor's draft
 * ref; one editor saves 100 drafts from 8 connections, then `POST /publish` publishes them in one
 * request with CMS_GIT_ON_PUBLISH=true (one commit). Its time is the figure; the drafts, the files
 * and the commit are checked.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { ApiClient, runLoad } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms } from './cms-process.js'
import type { SectionReport } from './report.js'
import { runGit } from './site-generator.js'
import { summarize } from './stats.js'
import { PUBLISH_100_MS } from './targets.js'
import { settled } from './process-cpu.js'

/** Every signed-in editor may do everything, and every edit is a draft. */
export const POLICY = 'permissions:\n  editor: [\'*\']\n'
const DRAFTS = 100

/** The answer of POST /publish. */
export interface PublishBody {
  ok: boolean
  published: unknown[]
  conflicts: unknown[]
  failed: unknown[]
  commit?: string
  commitError?: string
}

interface EntryBody { entries: Array<{ id: string, draft?: boolean, data?: { title?: unknown } }> }

/**
 * Runs the publish section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function publishBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const site = await ctx.freshSite(ctx.entries, POLICY)
  const ids = site.ids.slice(0, DRAFTS)
  const server = await spawnCms(site.dir, { CMS_GIT_ON_PUBLISH: 'true' })
  try {
    const editor = new ApiClient(server.url)
    await editor.login()
    await editor.get('/entries?collection=posts&pageSize=1')
    // Drafts are saved once the server's start-up work (a first start indexes every entry) is done.
    await settled(server.pid)
    const tag = randomBytes(3).toString('hex')
    const valueOf = (id: string): string => `draft ${tag} ${id}`
    const run = await runLoad(ctx.concurrency, ids.length, async i => {
      const id = ids[i]!
      const res = await editor.post<{ ok: boolean }>('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value: valueOf(id) })
      if (res.body.ok !== true) throw new Error(`save_field ${id}: ${JSON.stringify(res.body)}`)
      return res.ms
    })
    const s = summarize(run.latencies)
    report.info(`draft saves, ${ctx.concurrency} connections of one editor, p50`, s.p50, 'ms', `p95 ${s.p95.toFixed(1)} ms, n=${s.count}${run.errors > 0 ? `, ${run.errors} errors: ${run.firstError ?? ''}` : ''}`)

    let drafts = 0
    for (const id of ids) {
      const entry = (await editor.get<EntryBody>(`/entries?collection=posts&id=${id}`)).body.entries[0]
      if (entry?.draft === true && entry.data?.title === valueOf(id)) drafts++
    }
    report.exactly('drafts visible to their editor before publish', drafts, ids.length)

    const started = performance.now()
    const pub = await editor.post<PublishBody>('/publish', {})
    const ms = performance.now() - started
    report.atMost(`publish of ${ids.length} drafts at ${site.ids.length} (one request, with commit)`, ms, 'ms', PUBLISH_100_MS,
      `${pub.body.published.length} published, ${pub.body.conflicts.length} conflicts, ${pub.body.failed.length} failed`)

    let files = 0
    if (pub.body.commit !== undefined) {
      files = (await runGit(site.dir, 'show', '--name-only', '--format=', pub.body.commit)).split('\n').filter(l => l.trim() !== '').length
    }
    let onDisk = 0
    for (const id of ids) {
      if ((await readFile(path.join(site.dir, 'content', 'posts', `${id}.md`), 'utf8')).includes(valueOf(id))) onDisk++
    }
    report.exactly('published values in files and in the commit', onDisk, ids.length,
      pub.body.commit !== undefined ? `commit ${pub.body.commit.slice(0, 10)} with ${files} files` : `no commit: ${pub.body.commitError ?? 'absent'}`,
      onDisk === ids.length && files === ids.length)
  } finally {
    await server.stop()
  }
}
