import t from 'tap'
import { execFileSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, writeHeaders, type TestServer } from '../helpers/site.js'

// A save keeps the text it wrote, and the entry's next save takes it after one lstat instead of
// reading the file (issue 18, eleventh pass). An edit made outside the service between two saves,
// in place, keeping the file's size and setting its mtime back to the nanosecond, is still noticed
// (its ctime moved): the next save edits the outside text, not the kept one.

const API = '/api/cms'

async function mutate (s: TestServer, cookie: string, body: Record<string, unknown>): Promise<Response> {
  return await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
}

/** Rewrites part of a file in place (same inode, same size), then sets its mtime back to the nanosecond. */
async function editKeepingSizeAndMtime (file: string, at: number, bytes: string): Promise<void> {
  const before = lstatSync(file, { bigint: true })
  // Past the timestamp tick of the service's own write.
  await new Promise(resolve => setTimeout(resolve, 30))
  const fh = await open(file, 'r+')
  await fh.write(bytes, at)
  await fh.close()
  const ns = before.mtimeNs % 1_000_000_000n
  execFileSync('touch', ['-m', '-d', `@${before.mtimeNs / 1_000_000_000n}.${String(ns).padStart(9, '0')}`, file])
  const after = lstatSync(file, { bigint: true })
  if (after.size !== before.size || after.mtimeNs !== before.mtimeNs || after.ino !== before.ino) throw new Error('the edit changed the size, mtime or inode')
}

t.test('an outside edit keeping size and mtime between two saves is seen by the second save', async t => {
  const config = { collections: { posts: { format: 'md' as const }, nav: { format: 'yaml' as const } } }
  const s = await startServer(t, {
    config,
    files: {
      'content/posts/a.md': '---\ntitle: A\n---\nBody one\n',
      'content/nav/main.yaml': 'title: Main\nurl: /one/\n'
    }
  })
  const cookie = await s.login()
  const post = path.join(s.repoDir, 'content/posts/a.md')
  const nav = path.join(s.repoDir, 'content/nav/main.yaml')
  const save = async (collection: string, id: string, field: string, value: string): Promise<void> => {
    const res = await mutate(s, cookie, { type: 'save_field', collection, id, field, value })
    t.equal(res.status, 200, `save ${collection}/${id} ${field}=${value}`)
  }

  // Markdown: the body changes outside, the title is saved by the service.
  await save('posts', 'a', 'title', 'A1')
  t.equal(await readFile(post, 'utf8'), '---\ntitle: A1\n---\nBody one\n')
  await save('posts', 'a', 'title', 'A2')
  t.equal(await readFile(post, 'utf8'), '---\ntitle: A2\n---\nBody one\n', 'a second save of the kept text')
  await editKeepingSizeAndMtime(post, '---\ntitle: A2\n---\n'.length, 'Body two')
  t.equal(await readFile(post, 'utf8'), '---\ntitle: A2\n---\nBody two\n')
  await save('posts', 'a', 'title', 'A3')
  t.equal(await readFile(post, 'utf8'), '---\ntitle: A3\n---\nBody two\n', 'the outside body is kept by the next save')
  const list = await (await s.request(`${API}/entries?collection=posts&id=a`, { headers: { cookie } })).json() as { entries: Array<{ data: { body?: string } }> }
  t.equal(list.entries[0]?.data.body, 'Body two\n', 'and read')

  // The frontmatter changes outside (same size): the next save of another field keeps it.
  await editKeepingSizeAndMtime(post, '---\n'.length, 'TITLE')
  await save('posts', 'a', 'body', 'Body three\n')
  t.equal(await readFile(post, 'utf8'), '---\nTITLE: A3\n---\nBody three\n', 'the outside key is kept')

  // A data file (no body).
  await save('nav', 'main', 'title', 'Main1')
  t.equal(await readFile(nav, 'utf8'), 'title: Main1\nurl: /one/\n')
  await editKeepingSizeAndMtime(nav, 'title: Main1\nurl: /'.length, 'two')
  await save('nav', 'main', 'title', 'Main2')
  t.equal(await readFile(nav, 'utf8'), 'title: Main2\nurl: /two/\n', 'the outside value is kept by the next save')
})
