/**
 * Git remote (issue 16): a publish of 100 drafts including the push to a loopback remote (a bare
 * repository reached through git's own transport), a sync that brings 1,000 changed entries (from a
 * developer's push to listed with their new revisions), and the list latency while a sync runs.
 */
import { mkdtemp, rm, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { ApiClient } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms } from './cms-process.js'
import type { SectionReport } from './report.js'
import { runGit } from './site-generator.js'
import { summarize } from './stats.js'

const SECRET = 'bench-sync-secret-0123456789'
const CONFIG = `permissions:\n  editor: ['*']\ngit:\n  remote: origin\n  pullInterval: 0\n  syncSecret: ${SECRET}\n`

interface EntryBody { entries: Array<{ id: string, revision: number, data?: { title?: unknown } }>, pagination: { totalPages: number } }

/**
 * Runs the git remote section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function remoteBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const entries = Math.max(1100, Math.min(ctx.entries, 2000))
  ctx.log(`remote: generating ${entries} posts, a bare remote and a developer clone`)
  const site = await ctx.site({ entries, extraConfig: CONFIG })
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-bench-remote-'))
  try {
    const bare = path.join(root, 'site.git')
    await runGit(root, 'clone', '--quiet', '--bare', site.dir, bare)
    await runGit(site.dir, 'remote', 'add', 'origin', bare)
    await runGit(site.dir, 'fetch', '--quiet', 'origin')
    const dev = path.join(root, 'dev')
    await runGit(root, 'clone', '--quiet', bare, dev)
    const server = await spawnCms(site.dir, { CMS_GIT_ON_PUBLISH: 'true' })
    try {
      const editor = new ApiClient(server.url)
      await editor.login()
      await editor.get('/entries?collection=posts&pageSize=1')

      // 1. publish of 100 drafts, push included.
      const ids = site.ids.slice(0, 100)
      for (let i = 0; i < ids.length; i += 10) {
        await Promise.all(ids.slice(i, i + 10).map(async id => await editor.post('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value: `published ${id}` })))
      }
      const started = performance.now()
      const pub = await editor.post<{ published: unknown[], push?: { ok: boolean, commit?: string, error?: string } }>('/publish', {})
      const publishMs = performance.now() - started
      const remoteHead = (await runGit(bare, 'rev-parse', 'main')).trim()
      report.atMost('publish 100 drafts incl. push to a loopback remote', publishMs, 'ms', 1500,
        `${pub.body.published.length} published, push ${pub.body.push?.ok === true ? 'ok' : `failed: ${pub.body.push?.error ?? 'absent'}`}`)
      report.exactly('publish: the remote has the pushed commit', remoteHead === pub.body.push?.commit ? 1 : 0, 1)

      // 2. list p50 with no sync running.
      const listPage = async (): Promise<number> => (await editor.get<EntryBody>('/entries?collection=posts&pageSize=24')).ms
      const quiet: number[] = []
      for (let i = 0; i < 200; i++) quiet.push(await listPage())

      // 3. a developer changes 1,000 entries and pushes; the webhook brings them in.
      const changed = site.ids.slice(100, 1100)
      const stamp = `upstream ${Date.now().toString(36)}`
      await runGit(dev, 'pull', '--quiet', '--ff-only')
      for (const id of changed) {
        const file = path.join(dev, 'content', 'posts', `${id}.md`)
        const text = await readFile(file, 'utf8')
        await writeFile(file, text.replace(/^title: .*$/m, `title: ${stamp} ${id}`))
      }
      await runGit(dev, 'commit', '--quiet', '-am', 'developer: 1,000 titles')
      await runGit(dev, 'push', '--quiet', 'origin', 'HEAD:main')
      // Reads run while the sync does: their latency is the figure.
      let syncing = true
      const during: number[] = []
      const reader = (async () => { while (syncing) during.push(await listPage()) })()
      const syncStart = performance.now()
      const res = await fetch(`${server.url}/api/cms/sync`, { method: 'POST', headers: { 'x-gitlab-token': SECRET }, body: '{}' })
      const syncBody = await res.json() as { sync?: { state: string } }
      // The reads measured are those while the sync (fetch and fast-forward) runs.
      syncing = false
      await reader
      // Listed with the new content and revisions: every changed entry, page by page.
      const seen = new Set<string>()
      for (let page = 1; page <= 100 && seen.size < changed.length; page++) {
        const list = await editor.get<EntryBody>(`/entries?collection=posts&pageSize=100&page=${page}`)
        for (const e of list.body.entries) if (typeof e.data?.title === 'string' && e.data.title.startsWith(stamp) && e.revision > 1) seen.add(e.id)
        if (page >= list.body.pagination.totalPages) break
      }
      const syncMs = performance.now() - syncStart
      report.atMost('sync bringing 1,000 changed entries, until listed with new revisions', syncMs, 'ms', 3000,
        `${seen.size} of ${changed.length} seen, state ${syncBody.sync?.state ?? res.status}`)
      report.exactly('sync: changed entries listed with new content and revision', seen.size, changed.length)
      const q = summarize(quiet)
      const d = summarize(during.length > 0 ? during : [0])
      report.info('list page of 24, p50 without a sync', q.p50, 'ms', `p95 ${q.p95.toFixed(1)} ms`)
      report.atMost('list page of 24, p50 during a sync', d.p50, 'ms', Math.max(5, q.p50 * 2), `n=${during.length}; target: within 2x of ${q.p50.toFixed(2)} ms (or 5 ms)`)
    } finally {
      await server.stop()
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}
