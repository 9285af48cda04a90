import t from 'tap'
import { access, readFile, mkdtemp, mkdir, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { makeSite, git, startServer, writeHeaders, silentLogger } from '../helpers/site.js'
import { createCms } from '../../lib/cms.js'
import { commonGitDir } from '../../lib/storage/git-dir.js'

const API = '/api/cms'

t.test('a git worktree checkout (.git is a file) is served; refs and objects go to the common dir', async t => {
  const main = await makeSite(t)
  const parent = await mkdtemp(path.join(os.tmpdir(), 'git-cms-wt-'))
  t.teardown(async () => { await rm(parent, { recursive: true, force: true }) })
  const worktree = path.join(parent, 'checkout')
  git(main, 'worktree', 'add', '-q', '-b', 'edit', worktree)
  t.match(await readFile(path.join(worktree, '.git'), 'utf8'), /^gitdir: /, '.git is a file')

  const s = await startServer(t, { repoDir: worktree })
  const cookie = await s.login()
  const saved = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'authors', id: 'maria', field: 'name', value: 'Maria W.' }) })
  t.equal(saved.status, 200)
  t.match(await readFile(path.join(worktree, 'content/authors/maria.yaml'), 'utf8'), /Maria W\./, 'the worktree\'s file is written')
  t.match(await readFile(path.join(main, 'content/authors/maria.yaml'), 'utf8'), /^(?![\s\S]*Maria W\.)/, 'the main checkout is untouched')
  t.match(git(main, 'cat-file', '-t', 'refs/cms/history'), 'commit', 'history is a ref of the repository, readable by git')
  await access(path.join(main, '.git/cms/instance.lock'))
  t.pass('the service state lives in the common git dir')
  const history = await s.request(`${API}/history?collection=authors&id=maria`, { headers: { cookie } })
  t.equal((await history.json() as { history: unknown[] }).history.length, 1)
})

t.test('a SHA-256 repository is refused at start with the reason', async t => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-sha256-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  git(dir, 'init', '-q', '--object-format=sha256', '-b', 'main')
  await writeFile(path.join(dir, 'README.md'), '# site\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'site')
  await t.rejects(createCms({ repoDir: dir, logger: silentLogger(), env: {} }), { name: 'StartupError', message: /SHA-256.*SHA-1/ })
})

t.test('a directory that is not a repository, or a subdirectory of one, is refused', async t => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-none-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await t.rejects(createCms({ repoDir: dir, logger: silentLogger(), env: {} }), { name: 'StartupError', message: /not a git repository/ })
  const site = await makeSite(t)
  await t.rejects(createCms({ repoDir: path.join(site, 'content'), logger: silentLogger(), env: {} }), { name: 'StartupError', message: /not a git repository \(it lies inside the working tree of/ })
})

t.test('a repository without a commit is refused, and nothing is written into it', async t => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-unborn-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  git(dir, 'init', '-q', '-b', 'main')
  await t.rejects(createCms({ repoDir: dir, logger: silentLogger(), env: {} }), { name: 'StartupError', message: /has no commit yet/ })
  await t.rejects(stat(path.join(dir, '.git', 'cms')), { code: 'ENOENT' }, 'no service state')
})

t.test('a plain .git folder gives the same common dir as git rev-parse', async t => {
  const site = await makeSite(t)
  t.equal(await commonGitDir(site), path.join(site, '.git'))
})

t.test('worktrees, separate git dirs, subfolders and non-repositories are answered as git rev-parse says', async t => {
  const main = await makeSite(t)
  const parent = await mkdtemp(path.join(os.tmpdir(), 'git-cms-plain-'))
  t.teardown(async () => { await rm(parent, { recursive: true, force: true }) })
  // A worktree checkout: `.git` is a file naming its git dir.
  const worktree = path.join(parent, 'checkout')
  git(main, 'worktree', 'add', '-q', '-b', 'other', worktree)
  t.equal(await commonGitDir(worktree), path.join(main, '.git'))
  // A submodule-style checkout: `.git` is a file naming a git dir elsewhere (--separate-git-dir).
  const separate = path.join(parent, 'separate')
  const store = path.join(parent, 'modules', 'separate.git')
  await mkdir(path.dirname(store))
  git(parent, 'init', '-q', '-b', 'main', `--separate-git-dir=${store}`, separate)
  t.match(await readFile(path.join(separate, '.git'), 'utf8'), /^gitdir: /)
  await t.rejects(commonGitDir(separate), { name: 'StartupError', message: /has no commit yet/ }, 'found, but no commit yet')
  git(separate, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'site')
  t.equal(await commonGitDir(separate), store)
  // A subfolder of a repository, and a folder that is none.
  await t.rejects(commonGitDir(path.join(main, 'content')), { name: 'StartupError', message: /lies inside the working tree of/ })
  const none = path.join(parent, 'none')
  await mkdir(none)
  await t.rejects(commonGitDir(none), { name: 'StartupError', message: /not a git repository/ })
  // A `.git` folder that is not a repository (no HEAD): git looks further up and finds none.
  await mkdir(path.join(none, '.git'))
  await t.rejects(commonGitDir(none), { name: 'StartupError', message: /not a git repository/ })
  // A detached HEAD is served.
  const detached = await makeSite(t)
  git(detached, 'checkout', '-q', '--detach')
  t.equal(await commonGitDir(detached), path.join(detached, '.git'))
})
