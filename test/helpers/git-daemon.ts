/**
 * Test helper: a real `git daemon` on loopback serving bare repositories (the git protocol, push
 * enabled), for the tests of several instances and of a standby taking over.
 */
import { spawn, execFileSync } from 'node:child_process'
import { createServer, connect } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

interface Teardown { teardown: (fn: () => unknown) => void }

/** A git daemon with one bare repository. */
export interface GitDaemon {
  /** `git://127.0.0.1:PORT/site.git` */
  url: string
  bareDir: string
  /**
   * A ref's value on the host.
   * @param ref the full ref name
   * @returns the sha, or '' when absent
   */
  ref: (ref: string) => string
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

async function accepts (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

/**
 * Starts `git daemon` over a bare clone of `sourceRepo`.
 * @param t the test (stops the daemon and removes the repository at teardown)
 * @param sourceRepo the repository whose branches seed the bare one
 * @returns the daemon
 */
export async function startGitDaemon (t: Teardown, sourceRepo: string): Promise<GitDaemon> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-daemon-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const bareDir = path.join(root, 'site.git')
  execFileSync('git', ['clone', '--quiet', '--bare', sourceRepo, bareDir])
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    const child = spawn('git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${port}`, root], { stdio: ['ignore', 'ignore', 'pipe'] })
    let exited = false
    child.once('exit', () => { exited = true })
    t.teardown(async () => {
      if (exited) return
      const gone = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await gone
    })
    while (!exited && !await accepts(port)) await new Promise(resolve => setTimeout(resolve, 20))
    if (!exited) {
      return {
        url: `git://127.0.0.1:${port}/site.git`,
        bareDir,
        ref: (ref) => { try { return execFileSync('git', ['-C', bareDir, 'rev-parse', '--verify', '--quiet', ref], { encoding: 'utf8' }).trim() } catch { return '' } }
      }
    }
    // Another process took the port between our probe and the daemon's bind.
    if (attempt === 5) throw new Error('git daemon did not start')
  }
}

/**
 * Waits for a condition, polling (never a fixed sleep).
 * @param what what is awaited (in the error)
 * @param check the condition
 * @param ms the longest wait
 * @returns resolves once it holds
 */
export async function until (what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}
