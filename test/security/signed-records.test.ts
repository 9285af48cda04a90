import t from 'tap'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { git } from '../helpers/site.js'
import { startRemoteSite, hostRef, gitAsync, API, SYNC_SECRET } from '../helpers/remote-site.js'

/** An attacker's clone of the host, with its refs/cms. */
async function attackerClone (t: { teardown: (fn: () => unknown) => void }, url: string): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-attacker-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dir = path.join(root, 'clone')
  await gitAsync(root, 'clone', '--quiet', url, dir)
  await gitAsync(dir, 'fetch', '--quiet', 'origin', '+refs/cms/*:refs/cms/*')
  return dir
}

/** Commits `edit` on top of `ref` in the attacker's clone and pushes only that ref. */
async function plantOn (dir: string, ref: string, edit: (dir: string) => Promise<void>): Promise<string> {
  await gitAsync(dir, 'checkout', '--quiet', '--detach', ref)
  await edit(dir)
  await gitAsync(dir, 'add', '-A')
  await gitAsync(dir, 'commit', '--quiet', '-m', 'cms: drafts')
  await gitAsync(dir, 'push', '--quiet', 'origin', `HEAD:${ref}`)
  return await gitAsync(dir, 'rev-parse', 'HEAD')
}

t.test('a record pushed on top of refs/cms/* by someone else is never adopted, served, published or restored', async t => {
  const site = await startRemoteSite(t)
  const { s } = site
  const victim = site.as('victim', 'Victim')
  const sync = async (): Promise<void> => {
    const res = await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })
    t.equal(res.status, 200, 'sync')
    await res.arrayBuffer()
  }
  t.equal((await victim.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })).status, 200)
  await sync()
  const draftRef = 'refs/cms/drafts/victim'
  const ours = git(s.repoDir, 'rev-parse', draftRef)
  t.equal(hostRef(site.host, draftRef), ours, 'the victim\'s drafts were pushed')
  t.match(git(s.repoDir, 'cat-file', 'commit', ours), /Cms-Signature: v1 [0-9a-f]{64}/, 'signed')

  // The attacker adds a draft of their own text to the victim's ref.
  const attacker = await attackerClone(t, site.host.url)
  const files = git(attacker, 'ls-tree', '-r', '--name-only', draftRef).split('\n')
  const draftFile = files.find(f => f.includes('notes') && f.endsWith('a.json'))
  t.ok(draftFile, `the victim's draft file (${files.join(', ')})`)
  const planted = await plantOn(attacker, draftRef, async dir => {
    const file = path.join(dir, draftFile!)
    await writeFile(file, (await readFile(file, 'utf8')).replace(/"n":\s*1/, '"n": 666'))
  })
  t.equal(hostRef(site.host, draftRef), planted, 'the host holds the planted record')
  await sync()
  t.equal(git(s.repoDir, 'rev-parse', draftRef), ours, 'not adopted')
  t.ok(site.logs.some(l => l.includes('not signed by this site') && l.includes(draftRef)), 'logged')
  const draft = await (await victim.get('/draft')).json() as { entries: Array<{ data?: { n?: number } }> }
  t.notMatch(JSON.stringify(draft), /"n":\s*666/, 'GET /draft does not serve it')
  const published = await victim.post('/publish', {})
  t.equal(published.status, 200)
  t.notMatch(await published.text(), /"n":\s*666/)
  t.same(JSON.parse(await readFile(path.join(s.repoDir, 'content/notes/a.json'), 'utf8')), { n: 1 }, 'Publish wrote the victim\'s own draft')
  t.notMatch(git(s.repoDir, 'show', 'HEAD:content/notes/a.json'), /"n":\s*666/, 'and committed it')

  // A history snapshot credited to someone else, on the history the publish pushed.
  await sync()
  const historyRef = 'refs/cms/history'
  const historyHead = git(s.repoDir, 'rev-parse', historyRef)
  t.equal(hostRef(site.host, historyRef), historyHead, 'the history was pushed')
  await gitAsync(attacker, 'fetch', '--quiet', 'origin', `+${historyRef}:${historyRef}`)
  const plantedHistory = await plantOn(attacker, historyRef, async dir => {
    const historyFiles = (await gitAsync(dir, 'ls-tree', '-r', '--name-only', 'HEAD')).split('\n')
    const file = path.join(dir, historyFiles.find(f => f.includes('notes') && f.endsWith('a.json'))!)
    const doc = JSON.parse(await readFile(file, 'utf8')) as { snapshots: Array<Record<string, unknown>> }
    doc.snapshots.push({ ...doc.snapshots[0], ts: Date.now(), data: { n: 777 }, editor: { id: 'alice', name: 'Alice (site owner)' } })
    await writeFile(file, JSON.stringify(doc))
  })
  t.equal(hostRef(site.host, historyRef), plantedHistory)
  await sync()
  t.equal(git(s.repoDir, 'rev-parse', historyRef), historyHead, 'the history is not adopted')
  const history = await (await victim.get('/history?collection=notes&id=a')).text()
  // The planted value and name, not any 777 (a timestamp may hold those digits).
  t.notMatch(history, /Alice|"n":\s*777/, 'GET /history does not serve it')
})
