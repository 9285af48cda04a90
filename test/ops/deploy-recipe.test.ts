import t from 'tap'
import { mkdtemp, readFile, rm, symlink, mkdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawn, execFileSync } from 'node:child_process'
import { makeSite, TEST_PASSWORD, TEST_SECRET } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'

// The packed package and the recipes under examples/deploy/, run outside a container: the tarball
// is what `npm pack` makes from the current build (the suite builds before tap); its install step
// is replaced by unpacking it beside the production dependencies already installed. A real
// `npm install -g` of it into a prefix is `npm run pack:install-check`: it needs the registry or an
// npm cache holding the production packages, and github.com for better-sqlite3's prebuilt binary or
// else a C++ toolchain to compile it (minutes; docs/deployment.md), so it is not in the suite.
const ROOT = fromRoot('/')
const DEPLOY = path.join(ROOT, 'examples', 'deploy')

interface Packed { dir: string, files: string[] }

async function packAndUnpack (t: { teardown: (fn: () => unknown) => void }): Promise<Packed> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'git-cms-pack-'))
  t.teardown(async () => { await rm(tmp, { recursive: true, force: true }) })
  const out = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8' })) as Array<{ filename: string, files: Array<{ path: string }> }>
  const tarball = path.join(tmp, out[0]!.filename)
  execFileSync('tar', ['-xzf', tarball, '-C', tmp])
  const dir = path.join(tmp, 'package')
  // The production dependencies, as `npm install` of the tarball would put them beside it.
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'))
  return { dir, files: out[0]!.files.map(f => f.path) }
}

/** Runs a command line until it prints its listening line; returns the URL and a stopper. */
async function serve (t: { teardown: (fn: () => unknown) => void }, argv: string[], env: Record<string, string>): Promise<{ url: string, stop: () => Promise<number | null> }> {
  const child = spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); const m = /listening on (http:\/\/\S+)/.exec(out); if (m !== null) resolve(m[1]!) })
    child.once('exit', code => { reject(new Error(`exited ${String(code)}: ${err}`)) })
  })
  return { url, stop: async () => { child.kill('SIGTERM'); return await exited } }
}

const secrets = async (): Promise<Record<string, string>> => {
  const text = await readFile(path.join(DEPLOY, 'secrets.env.example'), 'utf8')
  return Object.fromEntries(text.split('\n').filter(l => /^[A-Z_]+=/.test(l)).map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
}

t.test('the tarball holds the build and what it serves, not the sources or the tests', async t => {
  const { files } = await packAndUnpack(t)
  for (const f of ['bin/git-cms', 'bin/package.json', 'dist/lib/cli.js', 'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/browser/studio.js', 'dist/browser/bootstrap.js', 'fixtures-repo/cms.config.yaml', 'examples/deploy/Dockerfile', 'README.md', 'package.json']) t.ok(files.includes(f), f)
  for (const prefix of ['lib/', 'test/', 'bench/', 'dist/bench/', 'scripts/', '.ci/', 'node_modules/']) t.notOk(files.some(f => f.startsWith(prefix)), `nothing under ${prefix}`)
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  for (const hook of ['install', 'preinstall', 'postinstall']) t.equal(pkg.scripts[hook], undefined, `no ${hook} script: installing never builds`)
})

t.test('the Dockerfile: node 20 slim, git, non-root, secrets only from the environment; its steps run outside Docker', async t => {
  const text = await readFile(path.join(DEPLOY, 'Dockerfile'), 'utf8')
  const steps = text.split('\n').filter(l => /^[A-Z]+ /.test(l)).map(l => ({ op: l.slice(0, l.indexOf(' ')), arg: l.slice(l.indexOf(' ') + 1) }))
  const of = (op: string): string[] => steps.filter(s => s.op === op).map(s => s.arg)
  t.same(of('FROM'), ['node:20-slim'])
  t.ok(of('RUN').some(r => /apt-get install .*\bgit\b/.test(r)), 'git installed')
  t.ok(of('RUN').some(r => /npm install -g .*git-cms-\*\.tgz/.test(r)), 'the packed tarball installed globally')
  const user = of('USER')
  t.equal(user.length, 1)
  t.notMatch(user[0], /^(root|0)$/, 'non-root')
  t.notMatch(text, /CMS_EDIT_PASSWORD=|CMS_SESSION_SECRET=/, 'no secret in the image')
  t.same(of('VOLUME'), ['/srv/site'])
  const env = Object.fromEntries(of('ENV').flatMap(e => e.split(' ')).map(kv => kv.split('=') as [string, string]))
  t.equal(env.NODE_ENV, 'production')
  const entry = JSON.parse(of('ENTRYPOINT')[0]!) as string[]
  t.equal(entry[0], 'git-cms')

  // The steps, on a clean directory: the installed package, the site as the volume, the
  // entrypoint with the secrets from the environment (port 0 and loopback for the test).
  const { dir } = await packAndUnpack(t)
  const site = await makeSite(t, {}, {})
  const argv = [process.execPath, path.join(dir, 'bin', 'git-cms'), ...entry.slice(1).map(a => a === '/srv/site' ? site : a === '0.0.0.0' ? '127.0.0.1' : a === '4321' ? '0' : a)]
  const running = await serve(t, argv, { ...env, ...await secrets() })
  const health = await fetch(`${running.url}/healthz`)
  t.equal(health.status, 200)
  const probe = /CMD (node -e .*)$/.exec(of('HEALTHCHECK')[0]!)![1]!.replace('http://127.0.0.1:4321', running.url)
  t.equal(spawnStatus(probe), 0, 'the HEALTHCHECK command passes')
  const login = await fetch(`${running.url}/api/cms/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: (await secrets()).CMS_EDIT_PASSWORD }) })
  t.equal(login.status, 200, 'the password from the environment signs in')
  t.equal(await running.stop(), 0, 'SIGTERM: exit 0')

  // Without the secrets in production it refuses to start.
  const refused = spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' })
  t.equal(await new Promise(resolve => refused.once('exit', resolve)), 1, 'no CMS_SESSION_SECRET in production: refused')
})

t.test('the systemd unit: its ExecStart serves the site with the secrets of the EnvironmentFile', async t => {
  const text = await readFile(path.join(DEPLOY, 'git-cms.service'), 'utf8')
  const key = (k: string): string[] => text.split('\n').filter(l => l.startsWith(`${k}=`)).map(l => l.slice(k.length + 1))
  t.notMatch(key('User')[0], /^(root|0)$/, 'non-root')
  t.same(key('EnvironmentFile'), ['/etc/git-cms/secrets.env'])
  t.notMatch(text, /CMS_EDIT_PASSWORD=\S|CMS_SESSION_SECRET=\S/, 'no secret in the unit')
  const env = Object.fromEntries(key('Environment').flatMap(e => e.split(' ')).map(kv => kv.split('=') as [string, string]))
  const exec = key('ExecStart')[0]!.split(' ')
  t.equal(exec[0], '/usr/local/bin/git-cms')
  const { dir } = await packAndUnpack(t)
  // `npm install -g --prefix P` puts the executable at P/bin/git-cms, linked to the package's bin.
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'git-cms-prefix-'))
  t.teardown(async () => { await rm(prefix, { recursive: true, force: true }) })
  await mkdir(path.join(prefix, 'bin'))
  await symlink(path.join(dir, 'bin', 'git-cms'), path.join(prefix, 'bin', 'git-cms'))
  const site = await makeSite(t, {}, {})
  const argv = [path.join(prefix, 'bin', 'git-cms'), ...exec.slice(1).map(a => a === '/srv/site' ? site : a === '4321' ? '0' : a)]
  const running = await serve(t, argv, { ...env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET })
  t.equal((await fetch(`${running.url}/readyz`)).status === 200 || (await fetch(`${running.url}/healthz`)).status === 200, true)
  t.equal(await running.stop(), 0)
})

function spawnStatus (command: string): number | null {
  try { execFileSync('sh', ['-c', command], { stdio: 'ignore' }); return 0 } catch (err) { return (err as { status: number | null }).status }
}
