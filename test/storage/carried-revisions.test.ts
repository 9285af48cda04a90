import t, { type Test } from 'tap'
import { appendFile, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { listEntries, readEntry } from '../helpers/entry-api.js'
import { makeSite, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { RACY_MS } from '../../lib/storage/index-snapshot.js'

// Issue 18, seventh pass: the snapshot carries the revision states, so a restart whose revision
// log still holds the bytes the snapshot recorded does not parse the log. Any other log is parsed.

const CONFIG = `collections:
  posts:
    format: md
    titleField: title
`
const post = (title: string, body = 'Body.'): string => `---\ntitle: ${title}\n---\n\n${body}\n`
const FILES = { 'cms.config.yaml': CONFIG, 'content/posts/alpha.md': post('Alpha'), 'content/posts/bravo.md': post('Bravo'), 'content/posts/charlie.md': post('Charlie'), 'content/posts/delta.md': post('Delta') }

async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

async function mutate (s: TestServer, command: Record<string, unknown>): Promise<number> {
  const res = await s.request('/api/cms/mutate', { method: 'POST', headers: writeHeaders(await s.login()), body: JSON.stringify(command) })
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
  return ((await res.json()) as { revision: number }).revision
}

async function revisions (s: TestServer): Promise<{ ids: Record<string, number>, collection: number, carried: boolean }> {
  const ids: Record<string, number> = {}
  for (const v of await listEntries(s, 'posts')) ids[v.id] = v.revision
  const index = await s.services.content.index('posts')
  return { ids, collection: index.revision, carried: index.statesCarried }
}

const logFile = (repoDir: string): string => path.join(repoDir, '.git/cms/revisions/posts.jsonl')

/** A site whose alpha was saved twice and bravo deleted, stopped cleanly (snapshot and log in step). */
async function sitePrepared (t: Test): Promise<{ repoDir: string, before: { ids: Record<string, number>, collection: number } }> {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  const s = await startServer(t, { repoDir })
  await listEntries(s, 'posts')
  await mutate(s, { type: 'put_entry', collection: 'posts', id: 'alpha', data: { title: 'Alpha 2', body: 'Two.\n' }, expectedRevision: 1 })
  await mutate(s, { type: 'put_entry', collection: 'posts', id: 'alpha', data: { title: 'Alpha 3', body: 'Three.\n' }, expectedRevision: 2 })
  await mutate(s, { type: 'delete_entry', collection: 'posts', id: 'bravo', expectedRevision: 1 })
  // Past the racy window of the saved file, so its row is written to the snapshot.
  await settle()
  const before = await revisions(s)
  t.same(before.ids, { alpha: 3, charlie: 1, delta: 1 })
  t.equal(before.collection, 3 + 2 + 1 + 1, 'the collection revision counts the deleted entry')
  await s.close()
  return { repoDir, before }
}

t.test('a restart over an unchanged log takes the revisions from the snapshot, deleted entries included', async t => {
  const { repoDir, before } = await sitePrepared(t)
  const s = await startServer(t, { repoDir })
  const after = await revisions(s)
  t.ok(after.carried, 'the log was not parsed')
  t.same(after.ids, before.ids)
  t.equal(after.collection, before.collection)
  // A deleted entry created again continues its count (1, deleted 2, now 3).
  t.equal(await mutate(s, { type: 'put_entry', collection: 'posts', id: 'bravo', data: { title: 'Bravo again', body: 'B.\n' } }), 3)
  t.equal(await mutate(s, { type: 'put_entry', collection: 'posts', id: 'alpha', data: { title: 'Alpha 4', body: 'Four.\n' }, expectedRevision: 3 }), 4)
  await s.close()
  // The same again after those saves (the close wrote the snapshot with the log as it is now).
  const s2 = await startServer(t, { repoDir })
  const again = await revisions(s2)
  t.ok(again.carried)
  t.same(again.ids, { alpha: 4, bravo: 3, charlie: 1, delta: 1 })
  t.equal(again.collection, 4 + 3 + 1 + 1)
  await s2.close()
})

t.test('a log appended to while down is parsed, and its revisions win', async t => {
  const { repoDir } = await sitePrepared(t)
  const st = await stat(path.join(repoDir, 'content/posts/charlie.md'))
  await appendFile(logFile(repoDir), JSON.stringify({ id: 'charlie', rev: 9, sig: `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}` }) + '\n')
  const s = await startServer(t, { repoDir })
  const after = await revisions(s)
  t.notOk(after.carried, 'parsed')
  t.same(after.ids, { alpha: 3, charlie: 9, delta: 1 })
  await s.close()
  // The snapshot was written again with the log as it is: carried next time.
  const s2 = await startServer(t, { repoDir })
  const again = await revisions(s2)
  t.ok(again.carried)
  t.same(again.ids, { alpha: 3, charlie: 9, delta: 1 })
  await s2.close()
})

t.test('a log changed while down to other bytes of the same length (and mtime) is parsed', async t => {
  const { repoDir } = await sitePrepared(t)
  const file = logFile(repoDir)
  const st = await stat(file)
  const text = await readFile(file, 'utf8')
  t.match(text, /"id":"alpha","rev":3,/)
  await writeFile(file, text.replace('"id":"alpha","rev":3,', '"id":"alpha","rev":7,'))
  await utimes(file, st.atime, st.mtime)
  t.equal((await stat(file)).size, st.size)
  const s = await startServer(t, { repoDir })
  const after = await revisions(s)
  t.notOk(after.carried, 'parsed')
  t.equal(after.ids.alpha, 7)
  await s.close()
})

t.test('with carried revisions, files edited (same size and mtime), deleted and added while down are noticed', async t => {
  const { repoDir, before } = await sitePrepared(t)
  const charlie = path.join(repoDir, 'content/posts/charlie.md')
  const st = await stat(charlie)
  await writeFile(charlie, post('Charli2'))
  await utimes(charlie, st.atime, st.mtime)
  await unlink(path.join(repoDir, 'content/posts/delta.md'))
  await writeFile(path.join(repoDir, 'content/posts/echo.md'), post('Echo'))
  const s = await startServer(t, { repoDir })
  const after = await revisions(s)
  t.ok(after.carried)
  t.same(after.ids, { alpha: 3, charlie: 2, echo: 1 })
  t.equal((await readEntry(s, 'posts', 'charlie'))?.data?.title, 'Charli2')
  // charlie +1, delta deleted while down +1, echo new +1.
  t.equal(after.collection, before.collection + 3)
  t.equal(await mutate(s, { type: 'put_entry', collection: 'posts', id: 'delta', data: { title: 'Delta again', body: 'D.\n' } }), 3, 'delta: 1, deleted while down 2, created 3')
  await s.close()
})
