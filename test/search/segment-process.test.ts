import t from 'tap'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { CollectionSearch } from '../../lib/search/collection-search.js'
import { parseQuery } from '../../lib/search/search-query.js'
import type { FullTextIndex } from '../../lib/search/full-text-index.js'
import { INLINE_MAX_FILES } from '../../lib/search/segment-reader.js'
import { SearchSnapshot } from '../../lib/search/search-snapshot.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'

// A collection of INLINE_MAX_FILES entries or more with a persisted segment is built by the search
// process (segment-process.ts), which writes the file this process then loads.
const FILES = INLINE_MAX_FILES + 50

const name = (i: number): string => `p${String(i).padStart(4, '0')}`

/** A site of FILES posts, old enough for their signatures to be trusted (RACY_MS). */
async function site (t: { testdir: () => string }): Promise<{ repo: string, dir: string, open: (opts?: { overlayRebuild?: number }) => { index: CollectionIndex, search: CollectionSearch }, file: string }> {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < FILES; i++) writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  const state = path.join(repo, 'state')
  const open = (opts: { overlayRebuild?: number } = {}): { index: CollectionIndex, search: CollectionSearch } => {
    const search = new CollectionSearch(collection, repo, { ...opts, snapshot: new SearchSnapshot(state, collection, repo) })
    const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(state), validate: () => [], onEntryChange: search.onEntryChange })
    search.attach(index)
    return { index, search }
  }
  return { repo, dir, open, file: new SearchSnapshot(state, collection, repo).file }
}

const find = (text: FullTextIndex, q: string): string[] => {
  const ranked = text.search(parseQuery(q) ?? { words: [], prefixLast: false })
  return Array.from(ranked.keys, k => ranked.idOf(k)).sort()
}

/** The header of a persisted segment file (its JSON after the 16-byte prefix). */
function header (file: string): Record<string, unknown> {
  const buf = readFileSync(file)
  return JSON.parse(buf.subarray(16, 16 + buf.readUInt32LE(8)).toString('utf8')) as Record<string, unknown>
}

/** The pids of this process's children running the search worker's module. */
function searchProcesses (): number[] {
  const pids: number[] = []
  for (const task of readdirSync('/proc/self/task')) {
    let children = ''
    try { children = readFileSync(`/proc/self/task/${task}/children`, 'utf8') } catch { continue }
    for (const pid of children.split(' ').filter(s => s !== '').map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('search-worker')) pids.push(pid)
      } catch {}
    }
  }
  return pids
}

async function waitForSearchProcess (): Promise<number> {
  for (let i = 0; i < 5000; i++) {
    const [pid] = searchProcesses()
    if (pid !== undefined) return pid
    await new Promise(resolve => setTimeout(resolve, 2))
  }
  throw new Error('no search process started')
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    // A zombie (exited, not reaped yet) counts as gone.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

t.test('the search process builds and writes the segment; this process loads it; an entry edited meanwhile is found by its new words; a restart loads the file', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async t => {
  const { dir, open, file } = await site(t)
  const first = open()
  await first.index.ready()
  first.search.start()
  const pid = await waitForSearchProcess()
  // An edit while the process builds: its new words, never its old ones.
  writeFileSync(path.join(dir, 'p0007.md'), '---\ntitle: Post 7\n---\nRewritten kumquat.\n')
  await first.index.recordWrite('p0007', { title: 'Post 7', body: 'Rewritten kumquat.' })
  const text = await first.search.ready()
  t.equal(first.search.builds, 1, 'a full build')
  t.notOk(alive(pid), 'the process has exited')
  t.match(header(file), { build: /^[0-9a-f]{24}$/ }, 'the file was written by the process (its build token)')
  t.same(find(text, 'kumquat'), ['p0007'], 'the edited entry by its new word')
  t.same(find(text, 'word7 '), [], 'not by its old one')
  t.equal(find(text, 'common').length, FILES - 1)
  t.same(find(text, 'word123 '), ['p0123'])
  await first.search.flush()

  const second = open()
  await second.index.ready()
  const loaded = await second.search.ready()
  t.equal(second.search.builds, 0, 'a restart loads the file')
  t.ok(second.search.loadStats.fromSnapshot >= FILES - 1, 'every document whose file did not change taken from it')
  t.same(find(loaded, 'kumquat'), ['p0007'])
  t.same(find(loaded, 'word7 '), [])
  t.equal(searchProcesses().length, 0, 'no process for a load')
})

t.test('files changed just before the build: in this process their documents count, the file does not trust them at the next start', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async t => {
  const { dir, open } = await site(t)
  const first = open()
  await first.index.ready()
  // Rewritten within RACY_MS of the build's start (the index told, as a service write does).
  for (let i = 0; i < 3; i++) {
    writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: Post ${i}\n---\nFresh quince${i}.\n`)
    await first.index.recordWrite(name(i), { title: `Post ${i}`, body: `Fresh quince${i}.` })
  }
  const text = await first.search.ready()
  t.equal(first.search.builds, 1)
  t.same(find(text, 'quince1 '), ['p0001'])
  t.same(find(text, 'word1 '), [])
  t.equal(text.overlaySize, 0, 'nothing read again in this process')
  await first.search.flush()
  const second = open()
  await second.index.ready()
  const loaded = await second.search.ready()
  t.same(second.search.loadStats, { fromSnapshot: FILES - 3, read: 3 }, 'the racy files read again at the next start')
  t.same(find(loaded, 'quince1 '), ['p0001'])
})

t.test('a search process killed half-way: nothing of it is read, the worker builds instead, right answers', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async t => {
  const { dir, open, file } = await site(t)
  const first = open({ overlayRebuild: 5 })
  await first.index.ready()
  await first.search.ready()
  await first.search.settled()
  const before = header(file).build
  t.type(before, 'string', 'the first build by the process')
  // Past 5 + FILES/10 changed entries a rebuild starts (in the search process): it is killed.
  const changed = 5 + Math.ceil(FILES / 10) + 1
  for (let i = 0; i < changed; i++) {
    writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: Post ${i}\n---\nRewritten damson${i}.\n`)
    await first.index.recordWrite(name(i), { title: `Post ${i}`, body: `Rewritten damson${i}.` })
  }
  const pid = await waitForSearchProcess()
  process.kill(pid, 'SIGKILL')
  for (let i = 0; i < 800 && first.search.builds < 2; i++) await new Promise(resolve => setTimeout(resolve, 25))
  t.equal(first.search.builds, 2, 'the rebuild done (by the worker)')
  await first.search.settled()
  t.equal(header(file).build, undefined, 'the file is the worker build\'s, persisted by this process')
  // (The writes made while it rebuilt are in the new index's overlay.)
  const text = await first.search.ready()
  t.same(find(text, 'damson3 '), ['p0003'])
  t.same(find(text, `damson${changed - 1} `), [name(changed - 1)])
  t.same(find(text, 'word3 '), [])
  t.equal(find(text, 'common').length, FILES - changed)
  await first.search.flush()
  const second = open()
  await second.index.ready()
  t.same(find(await second.search.ready(), 'damson3 '), ['p0003'], 'and the file loads at a restart')
})

t.test('closing while the search process builds kills it: gone when flush resolves, no file written', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async t => {
  const { open, file } = await site(t)
  const first = open()
  await first.index.ready()
  first.search.start()
  const ready = first.search.ready()
  const pid = await waitForSearchProcess()
  await first.search.flush()
  t.notOk(alive(pid), 'the process is gone')
  await t.rejects(ready, /closing/, 'the build ends (a search after close is not served from a half build)')
  t.notOk(existsSync(file), 'no segment file')
  await new Promise(resolve => setTimeout(resolve, 300))
  t.notOk(existsSync(file), 'nor later')
  const leftovers = existsSync(path.dirname(file)) ? readdirSync(path.dirname(file)) : []
  t.same(leftovers.filter(f => !f.startsWith('.cms-tmp-')), [], 'at most a temp file, which the start sweeps')
})

// A rebuild reuses the previous file's unchanged documents and reads the changed ones: the answers
// of a full build, with edits, deletes, title-only edits, adds and an entry edited during it.
t.test('a merge rebuild answers as a full build; at nice 19', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async t => {
  const { dir, open } = await site(t)
  const first = open({ overlayRebuild: 0 })
  await first.index.ready()
  await first.search.ready()
  await first.search.settled()
  t.same(first.search.fileBuildStats, { reused: 0, entries: FILES }, 'the first build read every entry (no file yet)')
  // Past FILES/10 changed entries a rebuild starts.
  const edit = async (i: number, title: string, body: string): Promise<void> => {
    writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: ${title}\n---\n${body}\n`)
    await first.index.recordWrite(name(i), { title, body })
  }
  for (const i of [1, 2, 3]) await edit(i, `Post ${i}`, `Rewritten damson${i}.`)
  // Title-only edits: the same entry twice (the second patches its overlay document's title terms).
  for (const i of [10, 11]) {
    await edit(i, `Post ${i} heron`, `Common words and word${i}.`)
    await edit(i, `Post ${i} osprey`, `Common words and word${i}.`)
  }
  for (const i of [20, 21]) {
    unlinkSync(path.join(dir, `${name(i)}.md`))
    await first.index.recordDelete(name(i))
  }
  writeFileSync(path.join(dir, 'p0005a.md'), '---\ntitle: Added\n---\nCommon words and medlar.\n')
  await first.index.recordWrite('p0005a', { title: 'Added', body: 'Common words and medlar.' })
  for (let i = 30; first.search.builds < 2 && searchProcesses().length === 0 && i < 60; i++) await edit(i, `Post ${i}`, `Common words and word${i} again.`)
  const pid = await waitForSearchProcess()
  t.equal(Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]), 19, 'the search process runs at nice 19')
  // An edit while the rebuild runs: its new words, never its old ones.
  await edit(100, 'Post 100', 'Persimmon.')
  for (let i = 0; i < 2000 && first.search.builds < 2; i++) await new Promise(resolve => setTimeout(resolve, 25))
  t.equal(first.search.builds, 2, 'rebuilt')
  await first.search.settled()
  const rows = (await first.index.all()).length
  const stats = first.search.fileBuildStats
  t.equal(stats.entries, rows, 'given every entry')
  t.ok(stats.reused > FILES - 50 && stats.reused < rows, `the unchanged entries reused (${stats.reused} of ${rows}), the changed ones read`)
  const text = await first.search.ready()

  // A full build of the same files (the worker: no persisted segment) answers the same.
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  const fullSearch = new CollectionSearch(collection, realpathSync(path.dirname(path.dirname(dir))))
  const fullIndex = new CollectionIndex({ collection, repoRealDir: realpathSync(path.dirname(path.dirname(dir))), store: new IndexStore(path.join(path.dirname(path.dirname(dir)), 'state2')), validate: () => [], onEntryChange: fullSearch.onEntryChange })
  fullSearch.attach(fullIndex)
  await fullIndex.ready()
  const full = await fullSearch.ready()
  for (const q of ['common', 'damson2 ', 'word2 ', 'word1', 'heron', 'osprey', 'post 10', 'medlar', 'added', 'word20 ', 'persimmon', 'word100 ', 'again', 'common words word3']) {
    t.same(find(text, q), find(full, q), `"${q}": the same entries as a full build`)
  }
  t.same(find(text, 'persimmon'), ['p0100'], 'the entry edited during the rebuild by its new word')
  t.same(find(text, 'word100 '), [], 'not by its old one')
  t.same(find(text, 'osprey'), ['p0010', 'p0011'], 'title-only edits by their last title')
  t.same(find(text, 'heron'), [])
  t.same(find(text, 'word20 '), [], 'deleted entries gone')
  await first.search.flush()
  const second = open()
  await second.index.ready()
  t.same(find(await second.search.ready(), 'persimmon'), ['p0100'], 'and the file loads at a restart')
  t.equal(second.search.builds, 0)
})
