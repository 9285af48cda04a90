import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepoWithStore, gitIn } from '../helpers/git-repo.js'
import { removeStaleLocks } from '../../lib/storage/temp-sweep.js'
import { GitStore, parseTree } from '../../lib/storage/git-store.js'
import { NewObjects } from '../../lib/storage/new-objects.js'
import { StorageUnavailableError } from '../../lib/errors.js'

const REF = 'refs/cms/test'

t.test('cat-file reads objects, refs and paths; a missing name is null', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], 'hello\n')
  const read = await git.objects.read(blob)
  t.same({ ...read, content: read?.content.toString() }, { oid: blob, type: 'blob', content: 'hello\n' })
  t.equal((await git.objects.read('HEAD:README.md'))?.content.toString(), 'site\n')
  t.equal(await git.objects.read('HEAD:nope'), null)
  t.equal(await git.readRef(REF), null)
  // Many reads at once are answered in order on one pipe.
  const many = await Promise.all(Array.from({ length: 200 }, async (_, i) => await git.objects.read(i % 2 === 0 ? blob : 'HEAD:nope')))
  t.ok(many.every((o, i) => i % 2 === 0 ? o?.oid === blob : o === null))
  t.same(parseTree((await git.objects.read('HEAD^{tree}'))!.content).map(e => e.path), ['README.md'])
  await t.rejects(git.objects.read('a\nb'), /Invalid object name/)
})

t.test('new trees are the ones git makes: entries in the byte order of git (a tree as if its name ended in /), whatever the names', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], 'x\n')
  const sub = gitIn(dir, ['mktree'], `100644 blob ${blob}\tf\n`).trim()
  // 'a' as a tree sorts after 'a-b' and 'a.txt' ('/' > '-' and '.'), a file 'a0' after it; the
  // astral character's UTF-16 order is before U+FFFD, its UTF-8 order after.
  const names = ['b', 'a.txt', 'a0', 'a-b', 'Z', '\u00e9', '\uFFFD', '\u{1F600}', 'e\u0301']
  const entries = [...names.map(name => ({ mode: '100644', path: name, oid: blob, type: 'blob' as const })), { mode: '40000', path: 'a', oid: sub, type: 'tree' as const }]
  const objects = new NewObjects(git.gitDir)
  const oid = objects.tree(entries)
  await objects.durable()
  const lines = entries.map(e => `${e.mode === '40000' ? '040000 tree' : '100644 blob'} ${e.oid}\t${e.path}`).join('\n') + '\n'
  t.equal(oid, gitIn(dir, ['mktree'], lines).trim(), 'the id git mktree gives the same entries')
  t.equal(gitIn(dir, ['cat-file', '-t', oid]).trim(), 'tree', 'written where git reads it')
})

t.test('a cat-file process that dies rejects what it was asked, and the next read starts another', async t => {
  const { git } = makeRepoWithStore(t)
  t.ok(await git.objects.read('HEAD'))
  // The running process, killed from outside (found among this process's children by its git dir).
  const pid = catFilePid(git.gitDir)
  const reading = git.objects.read('HEAD')
  process.kill(pid, 'SIGKILL')
  t.equal((await reading)?.type, 'commit', 'the read in flight is answered (asked again of a new process)')
  t.ok(await git.objects.read('HEAD'), 'and so are later ones')
})

t.test('reads of a git dir git cannot open are rejected with a typed error, never left waiting', async t => {
  const broken = new GitStore(path.join(t.testdir(), 'not-a-repo'))
  t.teardown(async () => { await broken.close() })
  await t.rejects(broken.objects.read('HEAD'), StorageUnavailableError)
  await t.rejects(broken.readRef('refs/cms/history'), StorageUnavailableError)
})

t.test('update-ref: create, move, compare-and-swap refused when the ref moved; git sees the value', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const one = gitIn(dir, ['rev-parse', 'HEAD'])
  const two = gitIn(dir, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'two'])
  t.equal(await git.refs.update(REF, one, null), 'ok')
  t.equal(gitIn(dir, ['rev-parse', REF]), one)
  t.equal(await git.refs.update(REF, two, null), 'moved', 'must not exist: refused')
  t.equal(await git.refs.update(REF, two, two), 'moved', 'stale expected value: refused')
  t.equal(gitIn(dir, ['rev-parse', REF]), one, 'unchanged')
  t.equal(await git.refs.update(REF, two, one), 'ok', 'works again after the refusal (a new process)')
  t.equal(await git.readRef(REF), two)
  gitIn(dir, ['pack-refs', '--all'])
  t.equal(await git.refs.update(REF, one, two), 'ok', 'a packed ref is updated')
  t.equal(gitIn(dir, ['rev-parse', REF]), one)
  await t.rejects(git.refs.update('refs/heads/main', one, null), /Invalid ref name/, 'only refs/cms/')
  await t.rejects(git.refs.update('refs/cms/a..b', one, null), /Invalid ref name/)
  await t.rejects(git.refs.update(REF, 'nope', null), /Invalid object id/)
})

t.test('a ref locked by another process makes the update wait, then give up with a 503', async t => {
  const { dir, gitDir, git } = makeRepoWithStore(t)
  const one = gitIn(dir, ['rev-parse', 'HEAD'])
  await git.refs.update(REF, one, null)
  const two = gitIn(dir, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'two'])
  writeFileSync(path.join(gitDir, `${REF}.lock`), '')
  await t.rejects(git.refs.update(REF, two, one), { name: 'StorageUnavailableError', message: /could not be updated \(.*cannot lock ref/ }, 'with git\'s reason')
  t.equal(gitIn(dir, ['rev-parse', REF]), one)
  t.ok(existsSync(path.join(gitDir, `${REF}.lock`)), 'the other process\'s lock is left alone')
})

t.test('removeStaleLocks removes lock files under refs/cms only', async t => {
  const { gitDir } = makeRepoWithStore(t)
  mkdirSync(path.join(gitDir, 'refs/cms/drafts'), { recursive: true })
  writeFileSync(path.join(gitDir, 'refs/cms/history.lock'), '')
  writeFileSync(path.join(gitDir, 'refs/cms/drafts/alice.lock'), '')
  writeFileSync(path.join(gitDir, 'refs/heads/main.lock'), '')
  await removeStaleLocks(gitDir)
  t.notOk(existsSync(path.join(gitDir, 'refs/cms/history.lock')))
  t.notOk(existsSync(path.join(gitDir, 'refs/cms/drafts/alice.lock')))
  t.ok(existsSync(path.join(gitDir, 'refs/heads/main.lock')))
})

/** The pid of our `git cat-file --batch` child on a git dir. */
function catFilePid (gitDir: string): number {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n')
  const line = lines.find(l => l.includes(`--git-dir=${gitDir} cat-file --batch`))
  if (line === undefined) throw new Error('no cat-file process')
  return Number(line.trim().split(' ')[0])
}
