import t from 'tap'
import { readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { createDemoRepo, fixturesRepoDir } from '../../lib/demo/site.js'
import { git } from '../helpers/site.js'

t.test('the demo repository is a committed copy of fixtures-repo with a local author', async t => {
  const dir = await createDemoRepo()
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  t.equal(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main')
  t.equal(git(dir, 'rev-list', '--count', 'HEAD'), '1')
  t.equal(git(dir, 'status', '--porcelain'), '', 'everything committed')
  t.equal(git(dir, 'config', '--local', 'user.name'), 'git-cms demo')
  t.equal(git(dir, 'config', '--local', 'user.email'), 'demo@git-cms.invalid')
  const rel = 'content/posts/hello-world.md'
  t.equal(await readFile(path.join(dir, rel), 'utf8'), await readFile(path.join(await fixturesRepoDir(), rel), 'utf8'))
  t.match(git(dir, 'ls-files'), 'cms.config.yaml')
  await rm(dir, { recursive: true, force: true })
  await t.rejects(stat(dir), { code: 'ENOENT' })
})

t.test('two demos get two directories', async t => {
  const [a, b] = await Promise.all([createDemoRepo(), createDemoRepo()])
  t.teardown(async () => { await rm(a, { recursive: true, force: true }); await rm(b, { recursive: true, force: true }) })
  t.not(a, b)
})
