// The folder watcher (lib/storage/folder-watch.ts) that replaced @parcel/watcher: real files,
// real inotify. Every change under the root must be told by path (or by `onLost`): edits, adds,
// deletes, renames, folders created (and filled at once), deleted, re-created, and bursts.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setLostThreshold, FolderWatch } from '../../lib/storage/folder-watch.js'
import { prepareFileAtomic, syncDirectory } from '../../lib/storage/atomic-write.js'

interface Recorder {
  paths: Set<string>
  lost: number
  errors: Error[]
  watch: FolderWatch
}

async function watched (t: Test, root: string): Promise<Recorder> {
  const rec: Recorder = { paths: new Set(), lost: 0, errors: [], watch: null as unknown as FolderWatch }
  rec.watch = await new FolderWatch(root, {
    onPath: file => { rec.paths.add(file) },
    onLost: () => { rec.lost++ },
    onError: err => { rec.errors.push(err) }
  }).start()
  t.teardown(() => { rec.watch.close() })
  return rec
}

/** Waits until `check` holds (inotify events arrive on a later turn), failing after 5 s. */
async function until (check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

async function tempRoot (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'folder-watch-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return dir
}

t.test('edits, adds, deletes and renames of files are told by path; hidden names are not', async t => {
  const root = await tempRoot(t)
  await writeFile(path.join(root, 'a.md'), 'a')
  await writeFile(path.join(root, 'b.md'), 'b')
  const rec = await watched(t, root)
  await appendFile(path.join(root, 'a.md'), ' more')
  await until(() => rec.paths.has(path.join(root, 'a.md')), 'the edit')
  await writeFile(path.join(root, 'c.md'), 'c')
  await until(() => rec.paths.has(path.join(root, 'c.md')), 'the add')
  await rm(path.join(root, 'b.md'))
  await until(() => rec.paths.has(path.join(root, 'b.md')), 'the delete')
  // An atomic write: a hidden temporary file renamed over the entry.
  await writeFile(path.join(root, '.c.md.tmp'), 'c2')
  await rename(path.join(root, '.c.md.tmp'), path.join(root, 'd.md'))
  await until(() => rec.paths.has(path.join(root, 'd.md')), 'the rename target')
  await rename(path.join(root, 'd.md'), path.join(root, 'e.md'))
  await until(() => rec.paths.has(path.join(root, 'e.md')), 'the rename')
  t.ok(rec.paths.has(path.join(root, 'e.md')))
  t.notOk([...rec.paths].some(p => path.basename(p).startsWith('.')), 'hidden names are never told')
  t.equal(rec.lost, 0)
  t.same(rec.errors, [])
})

t.test('folders: existing ones are watched; a new one is watched and its files told, even those written before its watch', async t => {
  const root = await tempRoot(t)
  await mkdir(path.join(root, 'deep', 'er'), { recursive: true })
  await mkdir(path.join(root, 'node_modules', 'x'), { recursive: true })
  const rec = await watched(t, root)
  await writeFile(path.join(root, 'deep', 'er', 'x.md'), 'x')
  await until(() => rec.paths.has(path.join(root, 'deep', 'er', 'x.md')), 'a file in an existing nested folder')
  await writeFile(path.join(root, 'node_modules', 'x', 'y.md'), 'y')
  // A new folder filled at once: the files written before its watch are told by its listing.
  await mkdir(path.join(root, 'new', 'sub'), { recursive: true })
  const early = Array.from({ length: 50 }, (_, i) => path.join(root, 'new', 'sub', `f${i}.md`))
  await Promise.all(early.map(async f => { await writeFile(f, 'early') }))
  await until(() => early.every(f => rec.paths.has(f)), 'every file of the new folder')
  // And a file written in it later is an event of its own watch.
  rec.paths.clear()
  await writeFile(path.join(root, 'new', 'sub', 'late.md'), 'late')
  await until(() => rec.paths.has(path.join(root, 'new', 'sub', 'late.md')), 'a later file in the new folder')
  // A folder moved in from outside the root.
  const outside = await tempRoot(t)
  await mkdir(path.join(outside, 'moved'))
  await writeFile(path.join(outside, 'moved', 'm.md'), 'm')
  await rename(path.join(outside, 'moved'), path.join(root, 'moved'))
  await until(() => rec.paths.has(path.join(root, 'moved', 'm.md')), 'the file of a folder moved in')
  await writeFile(path.join(root, 'moved', 'n.md'), 'n')
  await until(() => rec.paths.has(path.join(root, 'moved', 'n.md')), 'a file written in the moved-in folder')
  t.notOk([...rec.paths].some(p => p.includes('node_modules')), 'node_modules is not watched')
  t.same(rec.errors, [])
})

t.test('a deleted folder is told and let go; one re-created at its path is watched afresh', async t => {
  const root = await tempRoot(t)
  await mkdir(path.join(root, 'gone'))
  await writeFile(path.join(root, 'gone', 'a.md'), 'a')
  const rec = await watched(t, root)
  await rm(path.join(root, 'gone'), { recursive: true })
  await until(() => rec.paths.has(path.join(root, 'gone')), 'the deleted folder')
  rec.paths.clear()
  await mkdir(path.join(root, 'gone'))
  await writeFile(path.join(root, 'gone', 'b.md'), 'b')
  await until(() => rec.paths.has(path.join(root, 'gone', 'b.md')), 'a file of the re-created folder')
  rec.paths.clear()
  await appendFile(path.join(root, 'gone', 'b.md'), 'more')
  await until(() => rec.paths.has(path.join(root, 'gone', 'b.md')), 'an edit in the re-created folder')
  // Renamed: the old name is told, the new one watched.
  await rename(path.join(root, 'gone'), path.join(root, 'back'))
  await until(() => rec.paths.has(path.join(root, 'gone')) && rec.paths.has(path.join(root, 'back', 'b.md')), 'the renamed folder')
  rec.paths.clear()
  await writeFile(path.join(root, 'back', 'c.md'), 'c')
  await until(() => rec.paths.has(path.join(root, 'back', 'c.md')), 'a file of the renamed folder')
  t.equal(rec.lost, 0)
  t.same(rec.errors, [])
})

t.test('the root deleted: its owner is told everything may have changed', async t => {
  const parent = await tempRoot(t)
  const root = path.join(parent, 'root')
  await mkdir(root)
  const rec = await watched(t, root)
  await rm(root, { recursive: true })
  await until(() => rec.lost > 0, 'onLost')
  t.pass('told')
})

t.test('a burst of 3,000 new files and 3,000 edits: nothing missed', async t => {
  const root = await tempRoot(t)
  await mkdir(path.join(root, 'a'))
  await mkdir(path.join(root, 'b'))
  const rec = await watched(t, root)
  const files = Array.from({ length: 3000 }, (_, i) => path.join(root, i % 2 === 0 ? 'a' : 'b', `p${i}.md`))
  for (let i = 0; i < files.length; i += 200) await Promise.all(files.slice(i, i + 200).map(async f => { await writeFile(f, 'x') }))
  await until(() => files.every(f => rec.paths.has(f)), 'every new file')
  rec.paths.clear()
  for (let i = 0; i < files.length; i += 200) await Promise.all(files.slice(i, i + 200).map(async f => { await appendFile(f, 'y') }))
  await until(() => files.every(f => rec.paths.has(f)), 'every edit')
  t.ok(files.every(f => rec.paths.has(f)), 'each file told')
  t.equal(await readFile(files[0]!, 'utf8'), 'xy')
})

t.test('a turn that delivers as many events as a full kernel queue holds is taken as a loss', async t => {
  const root = await tempRoot(t)
  const rec = await watched(t, root)
  const other = await watched(t, await tempRoot(t))
  setLostThreshold(100)
  t.teardown(() => { setLostThreshold() })
  // Written while this thread does not read the events: they arrive in one turn.
  for (let i = 0; i < 300; i++) writeFileSync(path.join(root, `q${i}.md`), 'x')
  t.equal(rec.lost, 0, 'not before the events are read')
  await until(() => rec.lost > 0, 'onLost')
  t.ok(rec.lost > 0, 'the watch of the busy folder is told')
  t.ok(other.lost > 0, 'and every other watch of the process (one kernel queue for all)')
})

t.test('a real overflow of the kernel queue (more events than max_queued_events, unread) is told as a loss', async t => {
  let limit = 16384
  try { limit = Number.parseInt(await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10) } catch {}
  if (!(limit > 0 && limit <= 65536) || process.platform !== 'linux') { t.pass('no inotify queue to overflow cheaply here'); return }
  const root = await tempRoot(t)
  const rec = await watched(t, root)
  // Each new file is two events (create, modify): the queue overflows and libuv drops the overflow event.
  const count = Math.ceil(limit * 0.6)
  for (let i = 0; i < count; i++) writeFileSync(path.join(root, `o${i}.md`), 'x')
  await until(() => rec.lost > 0, 'onLost after the overflow')
  t.ok(rec.paths.size < count, `events were really lost (${rec.paths.size} of ${count} files told)`)
})

t.test('saves in a big flat folder are told as their entry files only: no folder path, no loss (issue 18, x1)', async t => {
  // A save's file steps as group commits take them (hidden temporary file, fsync, rename over the
  // entry, directory fsync). A folder path or a loss told here would make
  // every CollectionIndex of the folder rescan it (or re-stat every row) on its next read: a save's
  // cost would grow with the collection.
  const root = await tempRoot(t)
  const entries = 2000
  for (let i = 0; i < entries; i++) writeFileSync(path.join(root, `p${i}.md`), `---\ntitle: p${i}\n---\nbody\n`)
  const rec = await watched(t, root)
  const told: string[] = []
  const count = await new FolderWatch(root, { onPath: file => { told.push(file) }, onLost: () => { rec.lost++ } }).start()
  t.teardown(() => { count.close() })
  const saved = Array.from({ length: 40 }, (_, i) => path.join(root, `p${(i * 47) % entries}.md`))
  for (let i = 0; i < saved.length; i += 8) {
    const group = await Promise.all(saved.slice(i, i + 8).map(async f => await prepareFileAtomic(f, `---\ntitle: saved ${i}\n---\nbody\n`)))
    for (const f of group) await f.commit({ syncDirectory: false })
    await syncDirectory(root)
  }
  await until(() => saved.every(f => rec.paths.has(f)), 'every saved entry told')
  // Events still on their way arrive within a few turns.
  await new Promise(resolve => setTimeout(resolve, 100))
  t.same([...rec.paths].filter(f => !saved.includes(f)), [], 'nothing but the saved entry files (no folder, no temporary file)')
  t.equal(rec.lost, 0, 'no loss (which re-checks every file)')
  t.ok(told.length <= saved.length * 3, `a few events per save (${told.length} for ${saved.length} saves)`)
})
