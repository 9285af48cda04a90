import t from 'tap'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { GitObjectWriter } from '../../lib/storage/git-object-writer.js'
import { GitObjectReader } from '../../lib/storage/git-object-reader.js'

t.test('written objects are the ones git would write, and read back loose or packed', async t => {
  const { dir, gitDir } = makeRepo(t)
  const writer = new GitObjectWriter(gitDir)
  const text = '{"ü":"ñ"}\n'
  const blob = await writer.writeBlob(Buffer.from(text, 'utf8'))
  t.equal(blob, gitIn(dir, ['hash-object', '--stdin'], text))
  const sub = await writer.writeTree([{ mode: '100644', path: 'x.json', oid: blob, type: 'blob' }])
  // Names whose order differs between plain sorting and git's (a tree sorts as `name/`).
  const items = [
    { mode: '040000', path: 'a', oid: sub, type: 'tree' as const },
    { mode: '100644', path: 'a-b', oid: blob, type: 'blob' as const },
    { mode: '100644', path: 'a.json', oid: blob, type: 'blob' as const },
    { mode: '100644', path: 'a0', oid: blob, type: 'blob' as const },
    { mode: '040000', path: 'Z', oid: sub, type: 'tree' as const }
  ]
  const tree = await writer.writeTree(items)
  const expected = gitIn(dir, ['mktree'], items.map(i => `${i.mode} ${i.type} ${i.oid}\t${i.path}`).join('\n') + '\n')
  t.equal(tree, expected, 'same tree id as git mktree')
  const commit = await writer.writeCommit({ tree, parents: [], author: { name: 'git-cms', email: 'git-cms@users.git-cms.invalid', timestamp: 1700000000 }, message: 'm' })
  t.equal(gitIn(dir, ['cat-file', '-t', commit]), 'commit')
  t.equal(gitIn(dir, ['log', '-1', '--format=%an|%ae|%at|%s', commit]), 'git-cms|git-cms@users.git-cms.invalid|1700000000|m')
  gitIn(dir, ['update-ref', 'refs/cms/t', commit])
  t.equal(gitIn(dir, ['fsck', '--strict', '--no-progress', '--no-dangling']), '')

  const check = async (reader: GitObjectReader): Promise<void> => {
    t.equal((await reader.readBlob(blob)).toString('utf8'), text)
    t.same((await reader.readTree(tree)).map(e => [e.path, e.type, e.mode]).sort(), items.map(i => [i.path, i.type, i.mode]).sort())
    t.equal(await reader.readCommitTree(commit), tree)
    await t.rejects(reader.readTree(blob), 'a blob is not a tree')
  }
  await check(new GitObjectReader(gitDir))
  gitIn(dir, ['gc', '-q', '--prune=now'])
  const loose: string[] = await readdir(path.join(gitDir, 'objects', blob.slice(0, 2))).catch(() => [])
  t.notOk(loose.includes(blob.slice(2)), 'now packed')
  await check(new GitObjectReader(gitDir))
})

t.test('no temporary files are left behind', async t => {
  const { gitDir } = makeRepo(t)
  const writer = new GitObjectWriter(gitDir)
  await Promise.all(Array.from({ length: 50 }, async (_, i) => await writer.writeBlob(Buffer.from(String(i % 10)))))
  const dirs = await readdir(path.join(gitDir, 'objects'))
  for (const d of dirs.filter(d => /^[0-9a-f]{2}$/.test(d))) {
    t.notOk((await readdir(path.join(gitDir, 'objects', d))).some(f => f.startsWith('tmp_obj_')), d)
  }
})
