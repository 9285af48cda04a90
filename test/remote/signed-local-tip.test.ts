import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { git, startServer } from '../helpers/site.js'
import { startRemoteSite, hostRef, gitAsync, remoteConfig, API, SYNC_SECRET } from '../helpers/remote-site.js'
import type { ConfigInput } from '../../lib/config.js'

// CONTRACT 17: an instance adopts only refs/cms records this site signed. A tip an earlier version
// wrote unsigned is sealed by a signed commit of the same tree before it travels, so another
// instance adopts it instead of ignoring the drafts in it.
t.test('a refs/cms tip an earlier version wrote unsigned travels sealed, and another instance adopts it', async t => {
  const a = await startRemoteSite(t)
  const ann = a.as('ann')
  const sync = async (s: { request: (p: string, i?: RequestInit) => Promise<Response> }): Promise<number> =>
    (await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })).status

  t.equal((await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 7 })).status, 200)
  t.equal(await sync(a.s), 200)
  const signed = git(a.s.repoDir, 'rev-parse', 'refs/cms/drafts/ann')
  t.equal(hostRef(a.host, 'refs/cms/drafts/ann'), signed, 'the signed draft ref travelled')

  // An earlier version's commit on top: same records, no signature.
  const tree = git(a.s.repoDir, 'rev-parse', `${signed}^{tree}`)
  const unsigned = git(a.s.repoDir, 'commit-tree', tree, '-p', signed, '-m', 'cms: drafts')
  git(a.s.repoDir, 'update-ref', 'refs/cms/drafts/ann', unsigned, signed)
  t.equal(await sync(a.s), 200)

  const pushed = hostRef(a.host, 'refs/cms/drafts/ann')
  t.not(pushed, unsigned, 'the unsigned commit did not travel as the tip')
  t.equal(git(a.s.repoDir, 'rev-parse', 'refs/cms/drafts/ann'), pushed, 'the local ref is the sealed tip')
  t.equal(git(a.s.repoDir, 'rev-parse', `${pushed}^`), unsigned, 'sealed on top of the earlier commit')
  t.equal(git(a.s.repoDir, 'rev-parse', `${pushed}^{tree}`), tree, 'with the same records')
  t.ok(a.logs.some(l => l.includes('signed a refs/cms record an earlier version wrote')), 'logged')
  t.equal((await (await ann.get('/draft')).json() as { count: number }).count, 1, 'the draft is still served here')

  // A second instance adopts the sealed tip (it ignores unsigned ones) and serves the draft.
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-sealed-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dirB = path.join(root, 'b')
  await gitAsync(root, 'clone', '--quiet', a.host.url, dirB)
  const b = await startServer(t, { repoDir: dirB, config: remoteConfig as ConfigInput, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  t.equal(await sync(b), 200)
  t.equal(git(dirB, 'rev-parse', 'refs/cms/drafts/ann'), pushed, 'B adopted the sealed tip')
  const drafts = await (await b.request(`${API}/draft`, { headers: { 'x-user': 'ann', 'x-user-name': 'ann', 'x-user-roles': 'publisher' } })).json() as { count: number }
  t.equal(drafts.count, 1, 'B serves the draft')
})
