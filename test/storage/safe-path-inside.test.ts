import t from 'tap'
import path from 'node:path'
import { isInside, relativeBelow, relativeSlashPath } from '../../lib/storage/safe-path.js'

// isInside's quick prefix check must answer what path.relative answers, for every spelling.

const slow = (root: string, target: string): boolean => {
  const rel = path.relative(root, target)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..')
}

const roots = ['/repo/.git', '/repo/.git/', '/r/.cache/x', '/repo/..x', '/repo/...', '/repo/.', '/repo/..', '/.git', '/repo', '/repo/content', '/work/a.b/repo', '/home/u/.cache/repo', '/repo/', '/', '/r', '/repo/./x', '/repo//x', '/repo/../repo']
const tails = ['', '/', '/a', '/a/b.md', '/a/', '/.git', '/.git/config', '/a/.hidden', '/..', '/../x', '/a/../..', '/a/../../x', '/./a', '//a', '/a//b',
  'x', '-sibling/a', '/a/..', '/.../x', '/..x/y', '/a/.']
const other = ['/', '/rep', '/repository/a', '/other/repo/a', '/repo.git/a', '/repo/.gitx', '/repo/.git', '/repo/.git/x', '/repo/content/posts/a.md', '/r/.cache', '/repo/.', '/repo/..']

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

t.test('random spellings: the quick check agrees with path.relative', async t => {
  const names = ['a', 'b.md', '.', '..', '.git', '...', '..x', '.x', '', 'x.']
  let seed = 18
  const pick = (): string => { seed = (seed * 1103515245 + 12345) % 2147483648; return names[(seed >>> 12) % names.length] as string }
  const spell = (): string => { const n = 1 + ((seed >>> 8) % 4); const parts: string[] = []; for (let i = 0; i < n; i++) parts.push(pick()); return '/' + parts.join('/') }
  let disagreements = 0
  for (let i = 0; i < 20000; i++) {
    const root = spell()
    const target = ((seed >>> 20) & 1) === 0 ? root + spell() : spell()
    if (isInside(root, target) !== slow(root, target)) { disagreements++; t.fail(`${root} ⊇ ${target}`) }
  }
  t.equal(disagreements, 0)
})

t.test('relativeSlashPath answers what path.relative answers', async t => {
  const names = ['a', 'b.md', '.', '..', '.git', '...', '', 'x.']
  let seed = 7
  const pick = (): string => { seed = (seed * 1103515245 + 12345) % 2147483648; return names[(seed >>> 12) % names.length] as string }
  const spell = (): string => { const n = 1 + ((seed >>> 8) % 4); const parts: string[] = []; for (let i = 0; i < n; i++) parts.push(pick()); return '/' + parts.join('/') }
  const expected = (root: string, target: string): string => path.relative(root, target).split(path.sep).join('/')
  for (const [root, target] of [['/repo', '/repo/content/posts/a.md'], ['/repo', '/repo'], ['/repo', '/repo/'], ['/repo', '/other/a'], ['/', '/a/b'], ['/repo/', '/repo/a'], ['/repo', '/repo/../x'], ['/repo', '/repo/.git/x'], ['/repo', '/repox/a']] as const) {
    t.equal(relativeSlashPath(root, target), expected(root, target), `${root} -> ${target}`)
  }
  let disagreements = 0
  for (let i = 0; i < 20000; i++) {
    const root = spell()
    const target = ((seed >>> 20) & 1) === 0 ? root + spell() : spell()
    if (relativeSlashPath(root, target) !== expected(root, target)) { disagreements++; t.fail(`${root} -> ${target}`) }
  }
  t.equal(disagreements, 0)
})

t.test('relativeBelow answers path.relative or nothing', async t => {
  const names = ['a', 'b.md', '.', '..', '.git', '...', '', '.a.md.tmp']
  let seed = 11
  const pick = (): string => { seed = (seed * 1103515245 + 12345) % 2147483648; return names[(seed >>> 12) % names.length] as string }
  const spell = (): string => { const n = 1 + ((seed >>> 8) % 4); const parts: string[] = []; for (let i = 0; i < n; i++) parts.push(pick()); return '/' + parts.join('/') }
  t.equal(relativeBelow('/repo/content/posts', '/repo/content/posts/a.md'), 'a.md')
  t.equal(relativeBelow('/repo/content/posts', '/repo/content/posts/.a.md.tmp'), '.a.md.tmp')
  t.equal(relativeBelow('/repo/content/posts', '/repo/content/posts'), null, 'the folder itself')
  t.equal(relativeBelow('/repo/content/posts', '/repo/content/posts/../x'), null)
  t.equal(relativeBelow('/repo/content/posts', '/repo/content/postsx/a'), null)
  let answered = 0
  for (let i = 0; i < 20000; i++) {
    const root = spell()
    const target = ((seed >>> 20) & 1) === 0 ? root + spell() : spell()
    const rel = relativeBelow(root, target)
    if (rel === null) continue
    answered++
    if (rel !== path.relative(root, target)) t.fail(`${root} -> ${target}: ${rel}`)
  }
  t.ok(answered > 1000, `${answered} answered`)
})
