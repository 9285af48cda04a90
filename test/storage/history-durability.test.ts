import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { fromRoot } from '../helpers/repo-root.js'

// The order of system calls is what durability is about, so it is observed as it happens: strace
// records what the real code path (the built dist/, as the server runs it) asks the kernel, in order.
const DIST = fromRoot('dist/lib/storage/')
const hasStrace = spawnSync('strace', ['-V']).status === 0

t.test('a history commit fsyncs every new object before its rename, all before the ref moves; git fsyncs the new ref value first; object folders are not fsynced, as git does not', { skip: hasStrace ? false : 'strace is not installed' }, async t => {
  const { dir, gitDir } = makeRepo(t)
  const trace = path.join(dir, 'trace.txt')
  const script = `
    const { HistoryStore } = await import(${JSON.stringify(path.join(DIST, 'history-store.js'))})
    const { GitStore } = await import(${JSON.stringify(path.join(DIST, 'git-store.js'))})
    const git = new GitStore(${JSON.stringify(gitDir)})
    const history = new HistoryStore({ git })
    await history.append([{ collection: 'notes', id: 'a', snapshot: { data: { n: 1 }, action: 'save', editor: { id: 'x', name: 'X' }, revision: 1 } }])
    await git.close()
  `
  execFileSync('strace', ['-f', '-y', '-o', trace, '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2', process.execPath, '--input-type=module', '-e', script])
  t.match(gitIn(gitDir, ['cat-file', '-t', 'refs/cms/history']), 'commit', 'the ref points at a readable commit')
  const calls = completedCalls(trace)
  const refMoved = calls.findIndex(c => /rename.*refs\/cms\/history\.lock.*refs\/cms\/history"/.test(c))
  const lockSynced = calls.findIndex(c => /fsync\(\d+<[^>]*refs\/cms\/history\.lock>\s*\)/.test(c))
  const objectRenames = calls.flatMap((c, i) => /rename.*tmp_obj_\w+", ".*\/objects\/[0-9a-f]{2}\/[0-9a-f]{38}"/.test(c) ? [i] : [])
  const objectSyncs = calls.flatMap((c, i) => /fsync\(\d+<[^>]*tmp_obj_\w+>\s*\)/.test(c) ? [i] : [])
  const dirSyncs = calls.flatMap((c, i) => /fsync\(\d+<[^>]*\/objects\/[0-9a-f]{2}>\s*\)/.test(c) ? [i] : [])
  // A blob, its shard's tree, the collection's tree, the root tree and the commit.
  t.equal(objectRenames.length, 5, 'five new objects renamed into place')
  t.equal(objectSyncs.length, 5, 'each fsynced under its temporary name')
  t.ok(Math.max(...objectSyncs) < refMoved && Math.max(...objectRenames) < refMoved, 'all before the ref moved')
  t.ok(objectSyncs.every(s => objectRenames.some(r => r > s)) && Math.min(...objectSyncs) < Math.min(...objectRenames), 'fsynced before renamed')
  // Like git (core.fsync=loose-object): the object folders are not fsynced; git's fsync of the
  // ref's lock, after the renames, commits them with it.
  t.equal(dirSyncs.length, 0, 'no object folder fsynced')
  t.ok(lockSynced >= 0 && lockSynced < refMoved, 'git fsynced the new value in the lock file before the lock became the ref')
})

t.test('a save replaces its entry file only after its fsync and after the history ref is durable, then fsyncs the folder', { skip: hasStrace ? false : 'strace is not installed' }, async t => {
  const { dir, gitDir } = makeRepo(t)
  const trace = path.join(dir, 'trace.txt')
  const content = path.join(dir, 'content', 'notes')
  mkdirSync(content, { recursive: true })
  writeFileSync(path.join(content, 'a.json'), '{"n":1}\n')
  const script = `
    const { HistoryStore } = await import(${JSON.stringify(path.join(DIST, 'history-store.js'))})
    const { GitStore } = await import(${JSON.stringify(path.join(DIST, 'git-store.js'))})
    const git = new GitStore(${JSON.stringify(gitDir)})
    const history = new HistoryStore({ git })
    await history.append(
      [{ collection: 'notes', id: 'a', snapshot: { data: { n: 1 }, action: 'save', editor: { id: 'x', name: 'X' }, revision: 1 } }],
      [{ path: ${JSON.stringify(path.join(content, 'a.json'))}, data: '{"n":2}\\n' }]
    )
    await git.close()
  `
  execFileSync('strace', ['-f', '-y', '-o', trace, '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2', process.execPath, '--input-type=module', '-e', script])
  t.equal(readFileSync(path.join(content, 'a.json'), 'utf8'), '{"n":2}\n')
  const calls = completedCalls(trace)
  const first = (re: RegExp): number => calls.findIndex(c => re.test(c))
  const entryRenamed = first(/rename.*\.cms-tmp-[^"]*a\.json", ".*\/content\/notes\/a\.json"/)
  const entrySynced = first(/fsync\(\d+<[^>]*\.cms-tmp-[^>]*a\.json>\s*\)/)
  const refMoved = first(/rename.*refs\/cms\/history\.lock.*refs\/cms\/history"/)
  const refDirSynced = first(/fsync\(\d+<[^>]*\/refs\/cms>\s*\)/)
  const folderSynced = calls.findLastIndex(c => /fsync\(\d+<[^>]*\/content\/notes>\s*\)/.test(c))
  t.ok(entrySynced >= 0 && entrySynced < entryRenamed, 'the new entry file is fsynced under its temporary name before the rename')
  t.ok(refMoved >= 0 && refMoved < refDirSynced && refDirSynced < entryRenamed, 'the history ref moved and its directory was fsynced before the entry file was replaced')
  t.ok(folderSynced > entryRenamed, 'the entry folder fsynced after the rename')
})

t.test('the saves of one commit are each put in place, their folder fsynced after every rename', { skip: hasStrace ? false : 'strace is not installed' }, async t => {
  const { dir, gitDir } = makeRepo(t)
  const trace = path.join(dir, 'trace.txt')
  const content = path.join(dir, 'content', 'notes')
  mkdirSync(content, { recursive: true })
  const ids = ['a', 'b', 'c', 'd', 'e', 'f']
  for (const id of ids) writeFileSync(path.join(content, `${id}.json`), '{"n":1}\n')
  const script = `
    const { HistoryStore } = await import(${JSON.stringify(path.join(DIST, 'history-store.js'))})
    const { GitStore } = await import(${JSON.stringify(path.join(DIST, 'git-store.js'))})
    const git = new GitStore(${JSON.stringify(gitDir)})
    const history = new HistoryStore({ git })
    await Promise.all(${JSON.stringify(ids)}.map(id => history.append(
      [{ collection: 'notes', id, snapshot: { data: { n: 1 }, action: 'save', editor: { id: 'x', name: 'X' }, revision: 1 } }],
      [{ path: ${JSON.stringify(content)} + '/' + id + '.json', data: '{"n":2}\\n' }]
    )))
    await git.close()
  `
  execFileSync('strace', ['-f', '-y', '-o', trace, '-e', 'trace=fsync,fdatasync,rename,renameat,renameat2', process.execPath, '--input-type=module', '-e', script])
  for (const id of ids) t.equal(readFileSync(path.join(content, `${id}.json`), 'utf8'), '{"n":2}\n', `${id} in place`)
  const calls = completedCalls(trace)
  const renames = calls.flatMap((c, i) => /rename.*\.cms-tmp-[^"]*", ".*\/content\/notes\/\w\.json"/.test(c) ? [i] : [])
  const folderSyncs = calls.flatMap((c, i) => /fsync\(\d+<[^>]*\/content\/notes>\s*\)/.test(c) ? [i] : [])
  t.equal(renames.length, ids.length, 'every file renamed once')
  // Each rename is made durable by an fsync of its folder that ends after it.
  for (const r of renames) t.ok(folderSyncs.some(f => f > r), `a folder fsync after rename ${r}`)
})

/** Completed calls of an strace log, in completion order (a call split over unfinished/resumed lines counts when it returns). */
function completedCalls (trace: string): string[] {
  const pending = new Map<string, string>()
  const calls: string[] = []
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(line)
    if (m === null) continue
    const [, pid, text] = m as unknown as [string, string, string]
    if (text.includes('<unfinished ...>')) { pending.set(pid, text.replace('<unfinished ...>', '')); continue }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(text)
    const full = resumed !== null ? (pending.get(pid) ?? '') + resumed[1] : text
    if (/= 0$/.test(full.trim())) calls.push(full)
  }
  return calls
}
