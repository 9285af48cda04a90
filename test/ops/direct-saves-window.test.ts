import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createHmac } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { makeSite, startServer, git, writeHeaders, type TestServer } from '../helpers/site.js'
import { startGitDaemon, type GitDaemon } from '../helpers/git-daemon.js'

// Two instances of one site without a permissions policy (direct saves: a save writes the file at
// once, the publish commits and pushes it). Neither fetches on its own (pullInterval 0): the window
// in which B has not seen A's change stays open until B's sync webhook is called.
const API = '/api/cms'
const SYNC_SECRET = 'sync-secret-0123456789abcdef'
const SEED = {
  'cms.config.yaml': `collections:\n  notes:\n    format: json\ngit:\n  remote: origin\n  pullInterval: 0\n  syncSecret: ${SYNC_SECRET}\n`,
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/b.json': '{"n":0}\n'
}

interface Entry { id: string, revision: number, data: { n: number } }

async function instance (t: { teardown: (fn: () => unknown) => void }, host: GitDaemon): Promise<TestServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-direct-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dir = path.join(root, 'site')
  execFileSync('git', ['clone', '--quiet', host.url, dir])
  return await startServer(t, { repoDir: dir, env: { CMS_GIT_ON_PUBLISH: 'true' } })
}

t.test('direct saves on two instances: a save on B made before B fetched A\'s publish is kept on B, its publish push is refused, the host keeps A\'s version; after the fetch a stale save is 409', async t => {
  const host = await startGitDaemon(t, await makeSite(t, SEED, { fixtures: false }))
  const a = await instance(t, host)
  const b = await instance(t, host)
  const [ca, cb] = [await a.login(), await b.login()]
  const post = async (s: TestServer, cookie: string, p: string, body: unknown): Promise<Response> => await s.request(`${API}${p}`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const entry = async (s: TestServer, cookie: string, id: string): Promise<Entry> => ((await (await s.request(`${API}/entries?collection=notes&id=${id}`, { headers: { cookie } })).json()) as { entries: Entry[] }).entries[0]!
  const onDisk = async (s: TestServer, id: string): Promise<unknown> => JSON.parse(await readFile(path.join(s.repoDir, `content/notes/${id}.json`), 'utf8'))
  const onHost = (id: string): unknown => JSON.parse(git(host.bareDir, 'show', `main:content/notes/${id}.json`))
  const syncB = async (): Promise<{ state: string, message: string }> => {
    const payload = JSON.stringify({ ref: 'refs/heads/main' })
    const signature = 'sha256=' + createHmac('sha256', SYNC_SECRET).update(payload).digest('hex')
    const res = await b.request(`${API}/sync`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: payload })
    return ((await res.json()) as { sync: { state: string, message: string } }).sync
  }

  const seenByB = await entry(b, cb, 'a')
  t.equal((await post(a, ca, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1, expectedRevision: (await entry(a, ca, 'a')).revision })).status, 200, 'A saves a')
  t.match(await (await post(a, ca, '/publish', {})).json(), { push: { ok: true } }, 'A publishes and pushes')
  t.same(onHost('a'), { n: 1 })

  // The window: B has not fetched, so its copy (and revision) of a is still the old one.
  const inWindow = await post(b, cb, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 2, expectedRevision: seenByB.revision })
  t.equal(inWindow.status, 200, 'B accepts the save: it checks against its own copy')
  const published = await (await post(b, cb, '/publish', {})).json() as { push?: { ok: boolean, error?: string } }
  t.match(published, { push: { ok: false, error: /changed the same files/ } }, 'B\'s publish reports its push refused')
  t.same(onHost('a'), { n: 1 }, 'the host keeps A\'s version: nothing overwritten')
  t.same(await onDisk(b, 'a'), { n: 2 }, 'B keeps its save: nothing lost')
  t.equal(git(b.repoDir, 'show', 'HEAD:content/notes/a.json').trim(), '{"n":2}', 'in a commit on B that waits to be settled')
  t.match(await (await b.request(`${API}/draft`, { headers: { cookie: cb } })).json(), { retryPush: { available: true } })
  t.match(await syncB(), { state: 'ahead' }, 'B reports the commit that has not reached the host')

  // Outside the window: once B has fetched A's change, a save based on the old revision is a 409.
  t.equal((await post(a, ca, '/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 1, expectedRevision: (await entry(a, ca, 'b')).revision })).status, 200)
  const bBefore = await entry(b, cb, 'b')
  t.match(await (await post(a, ca, '/publish', {})).json(), { push: { ok: true } })
  // B is settled the way docs/deployment.md says: its waiting commit set aside, the host's branch taken.
  const waiting = git(b.repoDir, 'rev-parse', 'HEAD')
  git(b.repoDir, 'reset', '--quiet', '--keep', 'origin/main')
  t.match(await syncB(), { state: 'ok' }, 'B takes the host\'s branch after the reset')
  t.same(await onDisk(b, 'b'), { n: 1 }, 'B serves A\'s change of b')
  const stale = await post(b, cb, '/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 3, expectedRevision: bBefore.revision })
  t.equal(stale.status, 409, 'a save on B based on the content A changed is a conflict')
  t.same(await onDisk(b, 'b'), { n: 1 }, 'and writes nothing')
  // B's save of a made in the window is still in B's repository after the reset.
  t.equal(git(b.repoDir, 'show', `${waiting}:content/notes/a.json`).trim(), '{"n":2}', 'B\'s commit from the window is kept (git show <commit>)')
})
