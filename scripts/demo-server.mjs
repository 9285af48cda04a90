/**
 * Starts `bin/git-cms demo` (a throwaway copy of the example site) for the screenshot scripts.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Starts the demo with an edit password; resolves with the process and its URL once it listens. */
export async function startDemo (password) {
  const server = spawn(process.execPath, [path.join(ROOT, 'bin/git-cms'), 'demo', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, CMS_EDIT_PASSWORD: password },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    server.stdout.on('data', d => {
      out += d
      const m = /git-cms listening on (\S+)/.exec(out)
      if (m !== null) resolve(m[1])
    })
    server.once('exit', code => reject(new Error(`demo exited with ${code}`)))
  })
  return { server, url }
}
