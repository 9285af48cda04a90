import t from 'tap'
import path from 'node:path'
import { isInside } from '../../lib/storage/safe-path.js'

// isInside's quick prefix check must answer what path.relative answers, for every spelling.

const slow = (root: string, target: string): boolean => {
  const rel = path.relative(root, target)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..')
}

const roots = ['/repo', '/repo/content', '/work/a.b/repo', '/home/u/.cache/repo', '/repo/', '/', '/r', '/repo/./x', '/repo//x', '/repo/../repo']
const tails = ['', '/', '/a', '/a/b.md', '/a/', '/.git', '/.git/config', '/a/.hidden', '/..', '/../x', '/a/../..', '/a/../../x', '/./a', '//a', '/a//b',
  'x', '-sibling/a', '/a/..', '/.../x', '/..x/y', '/a/.']
const other = ['/', '/rep', '/repository/a', '/other/repo/a', '/repo.git/a']

t.test('the quick check agrees with path.relative', async t => {
  let n = 0
  for (const root of roots) {
    for (const target of [...tails.map(x => root + x), ...other]) {
      t.equal(isInside(root, target), slow(root, target), `${root} ⊇ ${target}`)
      n++
    }
  }
  t.ok(n > 200)
})

t.test('hostile spellings stay outside', async t => {
  t.notOk(isInside('/repo', '/repo/../etc/passwd'))
  t.notOk(isInside('/repo', '/repo/a/../../etc'))
  t.notOk(isInside('/repo', '/repo-other/a'))
  t.notOk(isInside('/repo', '/repo/./../x'))
  t.ok(isInside('/repo', '/repo/content/posts/a.md'))
  t.ok(isInside('/repo', '/repo'))
})
