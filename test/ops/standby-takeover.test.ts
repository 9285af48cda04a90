import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { makeSite, git } from '../helpers/site.js'
import { spawnServer, spawnCloneServer, loginAt } from '../helpers/spawn-server.js'
import { startGitDaemon, until } from '../helpers/git-daemon.js'

const API = '/api/cms'
const files = {
  // pullInterval 0: nothing fetches or pushes on a timer; the drafts must reach the host anyway.
  'cms.config.yaml': 'permissions:\n  editor: ["*"]\ncollections:\n  notes:\n    format: json\ngit:\n  remote: origin\n  pullInterval: 0\n',
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/b.json': '{"n":0}\n'
}

/** refs/cms/* of a repository, name -> sha. */
function cmsRefs (dir: string): Map<string, string> {
  const out = git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/cms/')
  return new Map(out.split('\n').filter(Boolean).map(line => line.split(' ') as [string, string]))
}

t.test('drafts and history reach the host within seconds of the save; a standby started with --clone after kill -9 serves them', async t => {
  const repo = await makeSite(t, files, { fixtures: false })
  const host = await startGitDaemon(t, repo)
  git(repo, 'remote', 'add', 'origin', host.url)
  git(repo, 'fetch', '--quiet', 'origin')
  const first = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  const cookie = await loginAt(first.url)
  const headers = { cookie, 'content-type': 'application/json', 'x-cms-request': '1' }
  const post = async (url: string, p: string, body: unknown): Promise<Response> => await fetch(`${url}${API}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })
  const get = async (url: string, p: string): Promise<unknown> => await (await fetch(`${url}${API}${p}`, { headers: { cookie } })).json()
  const onHost = (): boolean => {
    const local = cmsRefs(repo)
    return local.size > 0 && [...local].every(([ref, sha]) => host.ref(ref) === sha)
  }

  t.equal((await post(first.url, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })).status, 200)
  let saved = Date.now()
  await until('the draft on the host', onHost)
  t.comment(`draft on the host ${Date.now() - saved} ms after the save`)
  t.ok([...cmsRefs(repo).keys()].some(r => r.startsWith('refs/cms/drafts/')), 'a drafts ref was pushed')
  t.match(await (await post(first.url, '/publish', {})).json(), { push: { ok: true } })
  // A draft made after the publish, and the history snapshot of the publish: no sync, no publish after them.
  t.equal((await post(first.url, '/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 7 })).status, 200)
  saved = Date.now()
  await until('the new draft and the history on the host', () => onHost() && cmsRefs(repo).has('refs/cms/history'))
  t.comment(`second draft and history on the host ${Date.now() - saved} ms after the save`)
  const entries = await get(first.url, '/entries?collection=notes') as { entries: Array<{ id: string, data: unknown }> }
  const history = await get(first.url, '/history?collection=notes&id=a') as { history: Array<{ data: unknown, action: string }> }
  t.ok(history.history.length > 0, 'there is history')
  t.equal(await first.kill('SIGKILL'), null, 'killed')

  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-standby-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const standbyServer = await spawnCloneServer(t, host.url, path.join(root, 'site'), { CMS_GIT_ON_PUBLISH: 'true' })
  const url = standbyServer.url
  const standby = await get(url, '/entries?collection=notes') as { entries: Array<{ id: string, data: unknown }> }
  t.same(standby.entries.map(e => [e.id, e.data]), entries.entries.map(e => [e.id, e.data]), 'the same entries, the draft laid over')
  t.same(standby.entries.find(e => e.id === 'b')?.data, { n: 7 }, 'the draft saved after the publish')
  const standbyHistory = await get(url, '/history?collection=notes&id=a') as { history: Array<{ data: unknown, action: string }> }
  t.same(standbyHistory.history.map(h => [h.action, h.data]), history.history.map(h => [h.action, h.data]), 'the same history')
  t.match(await get(url, '/draft'), { count: 1 }, 'the same drafts')
  await standbyServer.kill('SIGTERM')
})
