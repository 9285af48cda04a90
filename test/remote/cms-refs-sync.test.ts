import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { git, startServer } from '../helpers/site.js'
import { startRemoteSite, hostRef, gitAsync, remoteConfig, API, SYNC_SECRET } from '../helpers/remote-site.js'
import type { ConfigInput } from '../../lib/config.js'

t.test('refs/cms travel between two instances: adopted when behind, kept local when both moved', async t => {
  const a = await startRemoteSite(t)
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-second-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dirB = path.join(root, 'b')
  await gitAsync(root, 'clone', '--quiet', a.host.url, dirB)
  const logs: string[] = []
  const logger = pino({ level: 'debug' }, new Writable({ write (c: Buffer, _e, done) { logs.push(c.toString()); done() } }))
  const b = await startServer(t, { repoDir: dirB, config: remoteConfig as ConfigInput, logger, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const headers = { 'x-user': 'ann', 'x-user-name': 'ann', 'x-user-roles': 'publisher' }
  const sync = async (s: { request: (p: string, i?: RequestInit) => Promise<Response> }): Promise<{ sync: { divergedRefs: string[] } }> =>
    await (await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })).json() as { sync: { divergedRefs: string[] } }
  const draftCount = async (s: { request: (p: string, i?: RequestInit) => Promise<Response> }): Promise<number> =>
    (await (await s.request(`${API}/draft`, { headers })).json() as { count: number }).count
  const save = async (s: { request: (p: string, i?: RequestInit) => Promise<Response> }, id: string, n: number): Promise<number> =>
    (await s.request(`${API}/mutate`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify({ type: 'save_field', collection: 'notes', id, field: 'n', value: n }) })).status

  t.equal(await save(a.s, 'a', 1), 200)
  await sync(a.s)
  const pushed = hostRef(a.host, 'refs/cms/drafts/ann')
  t.equal(pushed, git(a.s.repoDir, 'rev-parse', 'refs/cms/drafts/ann'), 'A pushed its draft ref')
  t.equal(await draftCount(b), 0)
  await sync(b)
  t.equal(git(dirB, 'rev-parse', 'refs/cms/drafts/ann'), pushed, 'B adopted it (it had none)')
  t.equal(await draftCount(b), 1, 'B serves the draft')

  // A moves on: B is behind and fast-forwards its ref.
  t.equal(await save(a.s, 'b', 2), 200)
  await sync(a.s)
  await sync(b)
  t.equal(git(dirB, 'rev-parse', 'refs/cms/drafts/ann'), git(a.s.repoDir, 'rev-parse', 'refs/cms/drafts/ann'), 'B follows A')
  t.equal(await draftCount(b), 2)

  // Both move: neither side's ref is overwritten. Each pushes its drafts about a second after the
  // save (CONTRACT 18): one push lands, the other is refused by its lease and reported at its sync.
  t.equal(await save(a.s, 'a', 3), 200)
  t.equal(await save(b, 'b', 4), 200)
  const refA = git(a.s.repoDir, 'rev-parse', 'refs/cms/drafts/ann')
  const refB = git(dirB, 'rev-parse', 'refs/cms/drafts/ann')
  const deadline = Date.now() + 60_000
  while (![refA, refB].includes(hostRef(a.host, 'refs/cms/drafts/ann')) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 25))
  const aWon = hostRef(a.host, 'refs/cms/drafts/ann') === refA
  const [loser, loserDir, loserRef, winnerRef] = aWon ? [b, dirB, refB, refA] : [a.s, a.s.repoDir, refA, refB]
  const report = await sync(loser)
  t.same(report.sync.divergedRefs, ['refs/cms/drafts/ann'], 'reported')
  t.equal(git(loserDir, 'rev-parse', 'refs/cms/drafts/ann'), loserRef, 'the other keeps its own')
  t.equal(hostRef(a.host, 'refs/cms/drafts/ann'), winnerRef, 'the host keeps the first push')
  t.ok([...logs, ...a.logs].some(l => l.includes('refs/cms refs changed both here and on the remote')), 'logged')
})
