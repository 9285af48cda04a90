import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, writeFile, stat } from 'node:fs/promises'
import { get } from 'node:http'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { BIN } from './helpers/spawn-server.js'
import { makeSite, repoFingerprint, TEST_PASSWORD, TEST_SECRET } from './helpers/site.js'
import { main } from '../lib/cli.js'

/** The environment without any CMS variable (or NODE_ENV) of the developer's shell. */
function cleanEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  const drop = new Set(['EDIT_PASSWORD', 'NODE_ENV'])
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CMS_') && !drop.has(k)) env[k] = v
  return { ...env, CMS_LOG_LEVEL: 'warn', ...extra }
}

interface Finished { code: number | null, stdout: string, stderr: string }

/** Runs the executable to its end (usage errors, a refusal); tap's timeout catches a hang. */
async function runToEnd (args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const code = await new Promise<number | null>(resolve => child.once('close', c => resolve(c)))
  return { code, stdout, stderr }
}

/**
 * Runs the CLI's main() in this process to its end, with the streams it writes captured: the
 * executable only hands it argv and the environment and exits with its code (which the spawned
 * cases here and test/cli-executable.test.ts prove), so a refusal needs no process of its own.
 */
async function mainToEnd (args: string[], env: NodeJS.ProcessEnv): Promise<Finished> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, env, { stdout: { write: (s: string) => { stdout += s } }, stderr: { write: (s: string) => { stderr += s } } })
  return { code, stdout, stderr }
}

interface Started { child: ChildProcess, url: string, out: () => string, err: () => string, exit: Promise<number | null> }

/** Starts the CLI and waits for its listening line. */
async function startCli (t: Test, args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr!.on('data', (c: Buffer) => { err += c.toString() })
  const exit = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  // No timer of its own: tap's timeout catches a start that hangs.
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /^git-cms listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out)
      if (m !== null) resolve(m[1]!)
    })
    child.once('exit', code => { reject(new Error(`exited ${String(code)}: ${err}`)) })
  })
  return { child, url, out: () => out, err: () => err, exit }
}

t.test('usage: --help, unknown commands and flags', async t => {
  const env = cleanEnv()
  const [help, unknown, flag, port] = await Promise.all([
    runToEnd(['--help'], env),
    runToEnd(['publish'], env),
    runToEnd(['serve', '--nope'], env),
    runToEnd(['serve', '--port', 'eighty'], env)
  ])
  t.equal(help.code, 0)
  t.match(help.stdout, /git-cms serve \[--repo DIR\] \[--port N\] \[--host H\]/)
  for (const [name, r] of [['unknown command', unknown], ['unknown flag', flag], ['bad port', port]] as const) {
    t.equal(r.code, 2, name)
    t.match(r.stderr, /^git-cms: .+\n\nUsage:/, name)
    t.equal(r.stdout, '', name)
  }
  t.match(unknown.stderr, "unknown command 'publish'")
  t.match(flag.stderr, '--nope')
})

t.test('serve refuses to start with one clear line on stderr', async t => {
  const notGit = t.testdir({ 'index.html': 'hi' })
  const noCommit = await makeSite(t, {}, { commit: false })
  const badConfig = await makeSite(t, { 'cms.config.yaml': 'enableAdmin: "yes"\n' })
  const site = await makeSite(t)
  const before = await repoFingerprint(badConfig)
  const long = 'x'.repeat(40)
  const cases: Array<[string, string, NodeJS.ProcessEnv, RegExp]> = [
    ['not a git repository', notGit, cleanEnv(), /not a git repository/],
    ['no commit', noCommit, cleanEnv(), /no commit/],
    ['invalid config', badConfig, cleanEnv(), /enableAdmin/],
    ['production without a secret', site, cleanEnv({ NODE_ENV: 'production', CMS_EDIT_PASSWORD: TEST_PASSWORD }), /CMS_SESSION_SECRET must be set/],
    ['production with a short secret', site, cleanEnv({ NODE_ENV: 'production', CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: 'short-secret' }), /at least 32/],
    ['production with the password as secret', site, cleanEnv({ NODE_ENV: 'production', CMS_EDIT_PASSWORD: long, CMS_SESSION_SECRET: long }), /differ from the editor password/]
  ]
  const results: Finished[] = []
  for (const [, dir, env] of cases) results.push(await mainToEnd(['serve', '--repo', dir, '--port', '0'], env))
  cases.forEach(([name, , , message], i) => {
    const r = results[i]!
    t.equal(r.code, 1, `${name}: exit code`)
    t.match(r.stderr, /^git-cms: [^\n]+\n$/, `${name}: exactly one stderr line`)
    t.match(r.stderr, message, `${name}: says why (${r.stderr.trim()})`)
    t.notMatch(r.stderr, /\n\s+at /, `${name}: no stack trace`)
    t.notMatch(r.stdout, 'listening', `${name}: never listened`)
  })
  t.equal(await repoFingerprint(badConfig), before, 'a refused start changes nothing')
})

t.test('serve listens, refuses a second instance, and on SIGTERM finishes a download in flight and exits 0', async t => {
  const big = Buffer.alloc(24 * 1024 * 1024, 7)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(big)
  const repo = await makeSite(t)
  await mkdir(path.join(repo, 'public/uploads/2026/02'), { recursive: true })
  await writeFile(path.join(repo, 'public/uploads/2026/02/big-00000000.png'), big)
  const server = await startCli(t, ['serve', '--repo', repo, '--port', '0'], cleanEnv({ CMS_EDIT_PASSWORD: TEST_PASSWORD }))

  const small = await fetch(`${server.url}/uploads/2026/01/maria-b917fe43.png`)
  t.equal(small.status, 200, 'a real request is answered')
  await small.arrayBuffer()

  const second = await runToEnd(['serve', '--repo', repo, '--port', '0'], cleanEnv({ CMS_SESSION_SECRET: TEST_SECRET }))
  t.equal(second.code, 1, 'a second serve on the same repository refuses')
  t.match(second.stderr, /^git-cms: [^\n]*already serves this repository[^\n]*\n$/)
  t.match(server.err(), /^git-cms: warning: CMS_SESSION_SECRET is not set/m, 'a generated secret is warned about outside production')

  // A download the client does not read yet stays in flight while the signal arrives.
  let received = 0
  let resume: () => void = () => {}
  let done: Promise<number> = Promise.resolve(-1)
  const headers = new Promise<void>((resolve, reject) => {
    const req = get(`${server.url}/uploads/2026/02/big-00000000.png`, res => {
      res.pause()
      resume = () => {
        res.on('data', (c: Buffer) => { received += c.length })
        res.resume()
      }
      done = new Promise<number>((resolve, reject) => {
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', reject)
      })
      resolve()
    })
    req.on('error', reject)
  })
  await headers
  server.child.kill('SIGTERM')
  await delay(300)
  t.equal(server.child.exitCode, null, 'still running while the download is in flight')
  resume()
  t.equal(await done, 200)
  t.equal(received, big.length, 'the whole file arrived')
  t.equal(await server.exit, 0, 'exit code 0 after the drain')
  await t.rejects(stat(path.join(repo, '.git/cms/instance.lock')), 'instance lock released')
})

t.test('demo serves a committed copy of the example site with a printed password', async t => {
  const demo = await startCli(t, ['demo', '--port', '0'], cleanEnv({ CMS_SESSION_SECRET: TEST_SECRET }))
  for (let i = 0; i < 200 && !/^repository: /m.test(demo.out()); i++) await delay(50)
  const out = demo.out()
  const password = /^password: (\S+)$/m.exec(out)?.[1]
  t.ok(password !== undefined && password.length >= 12, 'a generated password is printed')
  const repo = /^repository: (.+)$/m.exec(out)?.[1]
  t.ok(repo, 'the repository is printed')
  t.match(out, `site: ${demo.url}/`)
  t.match(out, `admin: ${demo.url}/admin`)
  t.notMatch(demo.err(), 'CMS_SESSION_SECRET is not set', 'no warning when a secret is given')

  const home = await fetch(`${demo.url}/`)
  t.equal(home.status, 200)
  t.match(await home.text(), 'href="/posts/hello-world"')
  const post = await (await fetch(`${demo.url}/posts/hello-world`)).text()
  t.match(post, 'data-cms-md="posts/hello-world#body"')
  t.match(post, '<h1 data-cms="posts/hello-world#title">Hello, world</h1>')

  const login = async (pw: string): Promise<number> => (await fetch(`${demo.url}/api/cms/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: pw })
  })).status
  t.equal(await login('not the password'), 401)
  t.equal(await login(password ?? ''), 200, 'the printed password signs in')

  demo.child.kill('SIGTERM')
  t.equal(await demo.exit, 0)
  await t.rejects(stat(repo ?? '/nonexistent'), 'the throwaway repository is removed')
})
