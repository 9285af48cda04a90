import t from 'tap'
import { isInside, relativeSlashPath } from '../../lib/storage/safe-path.js'

t.test('hostile spellings stay outside', async t => {
  t.notOk(isInside('/repo', '/repo/../etc/passwd'))
  t.notOk(isInside('/repo', '/repo/a/../../etc'))
  t.notOk(isInside('/repo', '/repo-other/a'), 'a sibling sharing the prefix')
  t.notOk(isInside('/repo', '/repo/./../x'))
  t.notOk(isInside('/repo', '/'))
  t.notOk(isInside('/repo/.git', '/repo/.gitx'), 'a sibling of .git sharing its prefix')
  t.notOk(isInside('/repo/.git', '/repo/content/a.md'))
})

t.test('paths below the root, and the root itself, are inside', async t => {
  t.ok(isInside('/repo', '/repo/content/posts/a.md'))
  t.ok(isInside('/repo', '/repo'))
  t.ok(isInside('/repo', '/repo/'))
  t.ok(isInside('/repo', '/repo/a/../b'), 'a `..` that stays inside')
  t.ok(isInside('/repo', '/repo/.../x'), 'a name of three dots is a name')
  t.ok(isInside('/repo', '/repo/..x/y'), 'as is one starting with two dots')
  t.ok(isInside('/repo/.git', '/repo/.git/config'))
  t.ok(isInside('/', '/anything'))
})

t.test('relativeSlashPath gives the path below a folder with / separators', async t => {
  t.equal(relativeSlashPath('/repo', '/repo/content/posts/a.md'), 'content/posts/a.md')
  t.equal(relativeSlashPath('/repo', '/repo'), '')
  t.equal(relativeSlashPath('/repo/content', '/repo/uploads/x.png'), '../uploads/x.png')
})
