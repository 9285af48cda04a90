import t from 'tap'
import { stat, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { makeSite, git, TEST_PASSWORD, TEST_SECRET } from '../helpers/site.js'
import { spawnServer, spawnCloneServer, loginAt, BIN } from '../helpers/spawn-server.js'
import { startGitHost } from '../helpers/git-http-server.js'
import { hostRef, gitAsync, SYNC_SECRET, API } from '../helpers/remote-site.js'

const files = {
  'cms.config.yaml': `permissions:\n  editor: ["*"]\ncollections:\n  notes:\n    format: json\ngit:\n  remote: origin\n  pullInterval: 0\n  syncSecret: ${SYNC_SECRET}\n`,
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/b.json': '{"n":0}\n'
}

// Generous: the limit only catches a hang, and a loaded machine is slow.
const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 120_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error(`timed out waiting for ${what}`)
}

t.test('kill -9 between the publish commit and its push: the push happens at the next start', async t => {
  const repo = await makeSite(t, files, { fixtures: false })
  const host = await startGitHost(t, repo)
  git(repo, 'remote', 'add', 'origin', host.url)
  await gitAsync(repo, 'fetch', '--quiet', 'origin')
  // The push waits in the host's hook until the server is killed in the middle, then fails anyway.
  await host.hook('pre-receive', 'while read old new ref; do\n  if [ "$ref" = refs/heads/main ]; then touch "$GIT_DIR/in-hook"; i=0; while [ ! -f "$GIT_DIR/killed" ] && [ -d "$GIT_DIR" ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; exit 1; fi\ndone\nexit 0')
  const first = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  const cookie = await loginAt(first.url)
  const headers = { cookie, 'content-type': 'application/json', 'x-cms-request': '1' }
  t.equal((await fetch(`${first.url}${API}/mutate`, { method: 'POST', headers, body: JSON.stringify({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 }) })).status, 200)
  const before = hostRef(host, 'refs/heads/main')
  const publishing = fetch(`${first.url}${API}/publish`, { method: 'POST', headers, body: '{}' }).catch(() => null)
  await until('the push to reach the hook', async () => await stat(path.join(host.bareDir, 'in-hook')).then(() => true, () => false))
  await first.kill('SIGKILL')
  await writeFile(path.join(host.bareDir, 'killed'), '')
  await publishing
  const committed = git(repo, 'rev-parse', 'HEAD')
  t.not(committed, before, 'the publish commit was made')
  t.equal(git(repo, 'show', '--format=', '--name-only', 'HEAD'), 'content/notes/a.json')
  await stat(path.join(repo, '.git/cms/pending-push.json'))
  t.equal(hostRef(host, 'refs/heads/main'), before, 'not pushed yet')

  // A new hook file (the killed push's hook keeps reading the old one).
  await host.hook('pre-receive', null)
  await host.hook('pre-receive', 'exit 0')
  const second = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  await until('the push after restart', () => hostRef(host, 'refs/heads/main') === committed)
  t.pass('the host has the commit')
  await until('the pending record to go', async () => await stat(path.join(repo, '.git/cms/pending-push.json')).then(() => false, () => true))
  const draft = await (await fetch(`${second.url}${API}/draft`, { headers: { cookie } })).json() as { retryPush: { available: boolean } }
  t.equal(draft.retryPush.available, false)
  await second.kill('SIGTERM')
})

t.test('serve --clone on an empty directory serves the same entries, history and drafts', async t => {
  const repo = await makeSite(t, files, { fixtures: false })
  const host = await startGitHost(t, repo)
  git(repo, 'remote', 'add', 'origin', host.url)
  await gitAsync(repo, 'fetch', '--quiet', 'origin')
  const first = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  const cookie = await loginAt(first.url)
  const headers = { cookie, 'content-type': 'application/json', 'x-cms-request': '1' }
  const post = async (url: string, p: string, body: unknown): Promise<Response> => await fetch(`${url}${API}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })
  await post(first.url, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  t.match(await (await post(first.url, '/publish', {})).json(), { push: { ok: true } })
  await post(first.url, '/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 2 })
  // The draft saved after the publish travels with the next sync.
  t.equal((await fetch(`${first.url}${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })).status, 200)
  const get = async (url: string, p: string): Promise<unknown> => await (await fetch(`${url}${API}${p}`, { headers: { cookie } })).json()
  const entries = await get(first.url, '/entries?collection=notes') as { entries: Array<{ id: string, data: unknown }> }
  const history = await get(first.url, '/history?collection=notes&id=a') as { history: Array<{ data: unknown, action: string }> }
  t.ok(history.history.length > 0, 'there is history')
  t.not(hostRef(host, 'refs/cms/history'), '')
  await first.kill('SIGTERM')

  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-clone-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dir = path.join(root, 'site')
  const clone = await spawnCloneServer(t, host.url, dir, { CMS_GIT_ON_PUBLISH: 'true' })
  const url = clone.url
  // The same session cookie (same signing secret): the same editor, whose drafts came along.
  const cookie2 = cookie
  const get2 = async (p: string): Promise<unknown> => await (await fetch(`${url}${API}${p}`, { headers: { cookie: cookie2 } })).json()
  const cloned = await get2('/entries?collection=notes') as { entries: Array<{ id: string, data: unknown }> }
  t.same(cloned.entries.map(e => [e.id, e.data]), entries.entries.map(e => [e.id, e.data]), 'the same entries (with the draft laid over)')
  const clonedHistory = await get2('/history?collection=notes&id=a') as { history: Array<{ data: unknown, action: string }> }
  t.same(clonedHistory.history.map(h => [h.action, h.data]), history.history.map(h => [h.action, h.data]), 'the same history')
  t.match(await get2('/draft'), { count: 1 }, 'the same drafts')
  t.notOk(clone.stderr().includes(host.token), 'the token is never printed')
  await clone.kill('SIGTERM')

  // Not empty and not a repository: refused, nothing touched.
  const other = path.join(root, 'other')
  await import('node:fs/promises').then(async fs => { await fs.mkdir(other); await fs.writeFile(path.join(other, 'x'), 'x') })
  const refused = spawn(process.execPath, [BIN, 'serve', '--clone', host.url, '--repo', other, '--port', '0'], { env: { ...process.env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET }, stdio: ['ignore', 'pipe', 'pipe'] })
  let err2 = ''
  refused.stderr.on('data', (c: Buffer) => { err2 += c.toString() })
  const code = await new Promise<number | null>(resolve => refused.once('exit', resolve))
  t.equal(code, 1)
  t.match(err2, /empty or missing directory/)
})
