import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { makeSite, startServer, git, writeHeaders, type TestServer } from '../helpers/site.js'
import { startGitDaemon, until, type GitDaemon } from '../helpers/git-daemon.js'
import { pino } from 'pino'

const API = '/api/cms'
/** The site, each instance fetching every `pullInterval` seconds (0: only before a publish and when a push was refused). */
const seed = (pullInterval: number): Record<string, string> => ({
  'cms.config.yaml': `permissions:\n  editor: ["*"]\ncollections:\n  notes:\n    format: json\ngit:\n  remote: origin\n  pullInterval: ${pullInterval}\n  syncSecret: ${SYNC_SECRET}\n`,
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/x0.json': '{"n":0}\n',
  'content/notes/x1.json': '{"n":0}\n',
  'content/notes/x2.json': '{"n":0}\n'
})
const SYNC_SECRET = 'sync-secret-0123456789abcdef'

/** A separate clone of the host with its own server (same password and secret as the others). */
async function instance (t: { teardown: (fn: () => unknown) => void }, host: GitDaemon, name = ''): Promise<TestServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-instance-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dir = path.join(root, 'site')
  execFileSync('git', ['clone', '--quiet', host.url, dir])
  // OPS_DEBUG=1: each instance's git commands and sync steps on stderr, tagged with its name.
  const logger = process.env.OPS_DEBUG !== undefined ? pino({ level: 'debug' }, pino.destination(2)).child({ instance: name }) : undefined
  return await startServer(t, { repoDir: dir, env: { CMS_GIT_ON_PUBLISH: 'true' }, ...(logger !== undefined ? { logger } : {}) })
}

const session = async (s: TestServer, cookie: string): Promise<boolean> =>
  ((await (await s.request(`${API}/auth/session`, { headers: { cookie } })).json()) as { authenticated: boolean }).authenticated

t.test('a logout on one instance ends the session on the other; a revocation not signed by the site is ignored', async t => {
  const host = await startGitDaemon(t, await makeSite(t, seed(1), { fixtures: false }))
  const a = await instance(t, host, 'A')
  const b = await instance(t, host, 'B')
  const cookie = await a.login()
  const other = await b.login()
  t.ok(await session(b, cookie), 'a session made on A holds on B')
  t.ok(await session(a, other), 'and one made on B on A')
  t.equal((await a.request(`${API}/auth/logout`, { method: 'POST', headers: { cookie } })).status, 200)
  t.notOk(await session(a, cookie), 'ended on A at once')
  const loggedOut = Date.now()
  if (process.env.OPS_DEBUG !== undefined) process.stderr.write(JSON.stringify({ msg: 'logout', time: loggedOut }) + '\n')
  await until('the logout to reach B', async () => !await session(b, cookie))
  t.comment(`session ended on B ${Date.now() - loggedOut} ms after the logout on A`)
  t.not(host.ref('refs/cms/revocations'), '', 'the revocations travel on refs/cms/revocations')
  t.ok(await session(b, other), 'the other session still holds')
  // B holds what A pushed and nothing more: it takes A's commit as it is instead of making its own
  // (which A would take in with a commit of its own, and so on at every sync).
  const pushed = git(a.repoDir, 'rev-parse', 'refs/cms/revocations')
  await until('B to hold A\'s revocations commit', () => { try { return git(b.repoDir, 'rev-parse', 'refs/cms/revocations') === pushed } catch { return false } })
  t.equal(host.ref('refs/cms/revocations'), pushed, 'the host holds A\'s commit, not a merge of it')
  t.equal(git(a.repoDir, 'rev-list', '--count', 'refs/cms/revocations'), '1', 'one commit: the logout')

  // Someone with push access plants a revocation of the other session, without the site's key.
  const clone = path.join(await mkdtemp(path.join(os.tmpdir(), 'git-cms-attacker-')), 'c')
  t.teardown(async () => { await rm(path.dirname(clone), { recursive: true, force: true }) })
  execFileSync('git', ['init', '--quiet', clone])
  git(clone, 'fetch', '--quiet', host.url, 'refs/cms/revocations:refs/cms/revocations')
  const otherId = JSON.parse(Buffer.from(other.replace('cms_session=', '').split('.')[0]!, 'base64url').toString()).editorId as string
  const forged = JSON.stringify({ version: 1, revoked: { [otherId]: Date.now() + 3_600_000 }, mac: 'AAAA' })
  const blob = execFileSync('git', ['-C', clone, 'hash-object', '-w', '--stdin'], { input: forged, encoding: 'utf8' }).trim()
  const tree = execFileSync('git', ['-C', clone, 'mktree'], { input: `100644 blob ${blob}\trevocations.json\n`, encoding: 'utf8' }).trim()
  const commit = git(clone, 'commit-tree', tree, '-p', 'refs/cms/revocations', '-m', 'forged')
  git(clone, 'push', '--quiet', host.url, `${commit}:refs/cms/revocations`)
  // B takes the forged commit in (as a parent) and pushes its merge: the host's ref moves past it.
  await until('B to merge the planted commit', () => { try { return git(b.repoDir, 'rev-list', 'refs/cms/revocations').split('\n').includes(commit) } catch { return false } })
  t.ok(await session(b, other), 'the unsigned revocation is ignored')
})

t.test('three instances publish one entry at the same moment: one wins, the others get a conflict and keep their drafts; history on the host holds every snapshot', async t => {
  const host = await startGitDaemon(t, await makeSite(t, seed(0), { fixtures: false }))
  const servers = await Promise.all([0, 1, 2].map(async (i) => await instance(t, host, String(i))))
  const cookies = await Promise.all(servers.map(async s => await s.login()))
  const post = async (i: number, p: string, body: unknown): Promise<Response> => await servers[i]!.request(`${API}${p}`, { method: 'POST', headers: writeHeaders(cookies[i]!), body: JSON.stringify(body), signal: AbortSignal.timeout(PUBLISH_LIMIT_MS) })
  const drafts = async (i: number): Promise<string[]> => ((await (await servers[i]!.request(`${API}/draft`, { headers: { cookie: cookies[i]! } })).json()) as { entries: string[] }).entries

  // Each editor drafts a different value of one entry on their own instance, then all publish at once.
  for (const i of [0, 1, 2]) t.equal((await post(i, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 10 + i })).status, 200)
  const started = Date.now()
  const outcomes = await Promise.all([0, 1, 2].map(async i => {
    const body = await (await post(i, '/publish', {})).json() as { published: Array<{ id: string }>, conflicts: Array<{ id: string, code: string }>, push?: { ok: boolean } }
    t.comment(`publish on instance ${i}: ${Date.now() - started} ms`)
    return body
  }))
  const winners = outcomes.flatMap((o, i) => o.published.length > 0 ? [i] : [])
  t.equal(winners.length, 1, 'exactly one publish wins')
  const winner = winners[0]!
  t.match(outcomes[winner], { push: { ok: true } })
  for (const i of [0, 1, 2].filter(i => i !== winner)) {
    t.match(outcomes[i], { published: [], conflicts: [{ id: 'a', code: 'stale_entry' }] }, `instance ${i}: a publish conflict, not an overwrite`)
    t.notOk('push' in outcomes[i]!, `instance ${i}: no commit of its own waits to be pushed`)
    t.same(await drafts(i), ['notes/a'], `instance ${i}: the losing draft is kept`)
    t.match(JSON.parse(await readFile(path.join(servers[i]!.repoDir, 'content/notes/a.json'), 'utf8')), { n: 10 + winner }, `instance ${i}: serves the winner's version`)
  }
  t.match(JSON.parse(git(host.bareDir, 'show', 'main:content/notes/a.json')), { n: 10 + winner }, 'the host has the winner')
  t.equal(git(host.bareDir, 'rev-list', '--count', 'main'), '2', 'main on the host: the seed and the winning publish')

  // Each publishes another entry, again at once: the branch pushes are replayed (different files),
  // and refs/cms/history, moved on every instance, is merged (both sides' snapshots) and pushed again.
  for (const i of [0, 1, 2]) t.equal((await post(i, '/mutate', { type: 'save_field', collection: 'notes', id: `x${i}`, field: 'n', value: 30 + i })).status, 200)
  const second = await Promise.all([0, 1, 2].map(async i => await (await post(i, '/publish', { collection: 'notes', id: `x${i}` })).json() as { published: Array<{ id: string }>, push?: { ok: boolean } }))
  for (const i of [0, 1, 2]) t.match(second[i], { published: [{ id: `x${i}` }], push: { ok: true } }, `instance ${i}: published and pushed`)
  for (const i of [0, 1, 2]) t.match(JSON.parse(git(host.bareDir, 'show', `main:content/notes/x${i}.json`)), { n: 30 + i })
  t.equal(git(host.bareDir, 'rev-list', '--merges', 'main'), '', 'main on the host is linear')
  t.equal(git(host.bareDir, 'rev-list', '--count', 'main'), '5')

  // Every snapshot any instance recorded reaches the host (waited for: the pushes follow the publishes).
  const missing = (): string[] => {
    const onHost = snapshotsOf(host.bareDir)
    return servers.flatMap((s, i) => [...snapshotsOf(s.repoDir)].filter(k => !onHost.has(k)).map(k => `instance ${i}: ${k}`))
  }
  await until('every instance\'s history snapshots on the host', () => missing().length === 0, PUBLISH_LIMIT_MS).catch(() => {})
  t.same(missing(), [], 'the host\'s history holds every snapshot of every instance')
  t.ok(['a', 'x0', 'x1', 'x2'].every(id => [...snapshotsOf(host.bareDir)].some(k => k.startsWith(`notes/${shard(id)}/${id}.json `))), 'snapshots of all four entries')
})

/** The longest a publish (or a push that follows it) may take on a loaded machine before the test fails. */
const PUBLISH_LIMIT_MS = 90_000

/** Every snapshot in a repository's refs/cms/history, as `path editor action revision data` (ts left out: a merge moves a repeated ts by 1 ms). */
function snapshotsOf (repo: string): Set<string> {
  const keys = new Set<string>()
  let files: string[]
  try { files = git(repo, 'ls-tree', '-r', '--name-only', 'refs/cms/history').split('\n').filter(f => f.endsWith('.json')) } catch { return keys }
  for (const file of files) {
    const doc = JSON.parse(git(repo, 'show', `refs/cms/history:${file}`)) as { snapshots: Array<{ editor?: { id: string }, action: string, revision?: number, data?: unknown }> }
    for (const s of doc.snapshots) keys.add(`${file} ${s.editor?.id ?? ''} ${s.action} ${s.revision ?? ''} ${JSON.stringify(s.data)}`)
  }
  return keys
}

function shard (id: string): string {
  return createHash('sha1').update(id).digest('hex').slice(0, 2)
}
