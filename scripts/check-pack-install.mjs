#!/usr/bin/env node
// `npm run pack:install-check`: what a site owner does with the package, for real. Packs this
// clone (`npm pack` builds once through `prepare`; `--no-build` packs the current build), installs
// the tarball with `npm install -g --prefix <temp>` (production dependencies from the registry or
// npm's cache; git-cms itself is not built at install, better-sqlite3 downloads its binary from
// github.com or compiles it with python3, make and g++), then runs the installed `git-cms` on a throwaway site
// and asks /healthz and /readyz. Prints each step's time; exit 1 on any failure. Not in the test
// suite: the install fetches dependencies and takes minutes.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-cms-install-check-'))
const step = (name, fn) => { const t0 = Date.now(); const out = fn(); console.log(`${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`); return out }
try {
  const packArgs = ['pack', '--json', '--pack-destination', tmp, ...(process.argv.includes('--no-build') ? ['--ignore-scripts'] : [])]
  const [{ filename }] = JSON.parse(step('npm pack', () => execFileSync('npm', packArgs, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })))
  const prefix = path.join(tmp, 'prefix')
  step('npm install -g', () => execFileSync('npm', ['install', '-g', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', '--prefix', prefix, path.join(tmp, filename)], { stdio: 'inherit' }))
  const site = path.join(tmp, 'site')
  mkdirSync(path.join(site, 'content', 'notes'), { recursive: true })
  writeFileSync(path.join(site, 'content', 'notes', 'hello.json'), '{"title":"Hello"}\n')
  const env = { ...process.env, GIT_AUTHOR_NAME: 'c', GIT_AUTHOR_EMAIL: 'c@example.invalid', GIT_COMMITTER_NAME: 'c', GIT_COMMITTER_EMAIL: 'c@example.invalid' }
  for (const args of [['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-qm', 'site']]) execFileSync('git', args, { cwd: site, env })
  const bin = path.join(prefix, 'bin', 'git-cms')
  const child = spawn(bin, ['serve', '--repo', site, '--port', '0'], { env: { ...process.env, CMS_EDIT_PASSWORD: 'install-check-password', CMS_SESSION_SECRET: 'install-check-secret-0123456789abcdef' }, stdio: ['ignore', 'pipe', 'inherit'] })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', c => { out += c; const m = /listening on (\S+)/.exec(out); if (m) resolve(m[1]) })
    child.once('exit', code => reject(new Error(`git-cms exited ${code}`)))
  })
  let ready = 503
  for (let i = 0; i < 200 && ready !== 200; i++) { ready = (await fetch(`${url}/readyz`)).status; if (ready !== 200) await new Promise(r => setTimeout(r, 50)) }
  const health = (await fetch(`${url}/healthz`)).status
  child.kill('SIGTERM')
  console.log(`installed git-cms: /healthz ${health}, /readyz ${ready}`)
  if (health !== 200 || ready !== 200) process.exitCode = 1
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
