import t from 'tap'
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, type TestServer } from '../helpers/site.js'

// A save checks its entry's path once (`CollectionIndex.fileOf`: the file's real path inside the
// collection folder's, inside the repository, outside `.git`) instead of twice (issue 18). Nothing is
// remembered between saves: a link swapped in after saves succeeded is refused at the next one.

const API = '/api/cms'

async function mutate (s: TestServer, cookie: string, body: Record<string, unknown>): Promise<Response> {
  return await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
}

t.test('links swapped in after saves succeeded are refused at the next save, and nothing changes', async t => {
  const config = { collections: { posts: { format: 'md' as const } } }
  const s = await startServer(t, { config, files: { 'content/posts/a.md': '---\ntitle: A\n---\nBody\n', 'content/posts/b.md': '---\ntitle: B\n---\n' } })
  const cookie = await s.login()
  const outside = path.join(path.dirname(s.repoDir), `outside-${path.basename(s.repoDir)}`)
  await mkdir(outside, { recursive: true })
  t.teardown(async () => { await rm(outside, { recursive: true, force: true }) })
  const secret = path.join(outside, 'a.md')
  await writeFile(secret, '---\ntitle: secret\n---\n')
  const save = async (id: string, value: string): Promise<Response> => await mutate(s, cookie, { type: 'save_field', collection: 'posts', id, field: 'title', value })
  const put = async (id: string, expectedRevision: number): Promise<Response> =>
    await mutate(s, cookie, { type: 'put_entry', collection: 'posts', id, data: { title: 'put', body: 'x' }, expectedRevision })

  for (let i = 0; i < 3; i++) t.equal((await save('a', `A${i}`)).status, 200, `save ${i}`)
  const entry = path.join(s.repoDir, 'content/posts/a.md')
  t.equal(await readFile(entry, 'utf8'), '---\ntitle: A2\n---\nBody\n')

  // The entry file becomes a link leaving the repository.
  await rm(entry)
  await symlink(secret, entry)
  let before = await repoFingerprint(s.repoDir)
  t.equal((await save('a', 'leak')).status, 400, 'save_field through a link leaving the repository')
  for (const rev of [0, 1, 2, 3, 4, 5]) t.equal((await put('a', rev)).status, 400, `put_entry (expectedRevision ${rev}) through the link`)
  t.equal(await readFile(secret, 'utf8'), '---\ntitle: secret\n---\n', 'the outside file is untouched')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed in the repository')

  // The entry file becomes a link into .git.
  await rm(entry)
  await symlink('../../.git/config', entry)
  const gitConfig = await readFile(path.join(s.repoDir, '.git/config'), 'utf8')
  before = await repoFingerprint(s.repoDir)
  t.equal((await save('a', 'git')).status, 400, 'save_field through a link into .git')
  for (const rev of [0, 1, 2, 3, 4, 5]) t.equal((await put('a', rev)).status, 400, `put_entry (expectedRevision ${rev}) through a link into .git`)
  t.equal(await readFile(path.join(s.repoDir, '.git/config'), 'utf8'), gitConfig, '.git/config is untouched')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed in the repository')

  // Another entry saves fine meanwhile; then the collection folder itself becomes a link leaving the repository.
  t.equal((await save('b', 'B1')).status, 200, 'another entry still saves')
  const folder = path.join(s.repoDir, 'content/posts')
  await writeFile(path.join(outside, 'b.md'), '---\ntitle: outside b\n---\n')
  await rename(folder, path.join(s.repoDir, 'content/posts-moved'))
  await symlink(outside, folder)
  before = await repoFingerprint(s.repoDir)
  const refused = await save('b', 'through the folder')
  t.equal(refused.status, 400, 'save_field in a folder that is now a link leaving the repository')
  t.equal(await readFile(path.join(outside, 'b.md'), 'utf8'), '---\ntitle: outside b\n---\n', 'the outside file is untouched')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed in the repository')
})

t.test('a collection folder holding .git (the repository root): a link into .git is refused', async t => {
  const config = { collections: { pages: { folder: '.', format: 'md' as const } } }
  const s = await startServer(t, { config, files: { 'page.md': '---\ntitle: Page\n---\n' } })
  const cookie = await s.login()
  const list = await s.request(`${API}/entries?collection=pages`, { headers: { cookie } })
  // A site whose config may not use the root as a folder has nothing to check here.
  if (list.status !== 200) { t.pass(`the root is not a collection folder here (${list.status})`); return }
  t.equal((await mutate(s, cookie, { type: 'save_field', collection: 'pages', id: 'page', field: 'title', value: 'P1' })).status, 200, 'a save in the root folder')
  await symlink('.git/config', path.join(s.repoDir, 'evil.md'))
  const gitConfig = await readFile(path.join(s.repoDir, '.git/config'), 'utf8')
  const before = await repoFingerprint(s.repoDir)
  for (const rev of [0, 1, 2]) {
    const res = await mutate(s, cookie, { type: 'put_entry', collection: 'pages', id: 'evil', data: { title: 'x' }, expectedRevision: rev })
    t.equal(res.status, 403, `put_entry through a link into .git (expectedRevision ${rev})`)
  }
  t.equal((await mutate(s, cookie, { type: 'save_field', collection: 'pages', id: 'evil', field: 'title', value: 'x' })).status, 403, 'save_field too')
  t.equal(await readFile(path.join(s.repoDir, '.git/config'), 'utf8'), gitConfig, '.git/config is untouched')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed')
})
