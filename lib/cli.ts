/** The command line (`serve`, `demo`, `init`): `bin/git-cms` hands it argv and the environment. */
import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { parseArgs, promisify } from 'node:util'
import type { OpenCms } from './cms.js'
import type { RunningServer } from './server.js'
import { StartupError } from './errors.js'
import { readRuntimeSettings } from './runtime.js'

/** Where the CLI writes; the process streams unless a caller passes others. */
interface CliStreams {
  stdout: { write: (text: string) => unknown }
  stderr: { write: (text: string) => unknown }
}

/** Exit code after a clean shutdown (or `--help`). */
const EXIT_OK = 0
/** Exit code when the service refuses to start (or fails while shutting down). */
const EXIT_REFUSED = 1
/** Exit code for bad usage: an unknown command or flag, a bad value. */
export const EXIT_USAGE = 2

/** The help text (stdout for `--help`, stderr after a usage error). */
const USAGE = `Usage:
  git-cms serve [--repo DIR] [--port N] [--host H]   serve the CMS over a site repository (DIR defaults to .)
  git-cms serve --clone URL --repo DIR [...]        clone the site (and its refs/cms/*) into an empty DIR, then serve it
  git-cms serve [...] --proxy URL                   also serve the site of a running dev server (hugo server ...) on this origin
  git-cms serve [...] --site DIR                    also serve a built site folder (public/, _site/ ...) on this origin
  git-cms demo  [--port N] [--host H]                serve a throwaway copy of the example site
  git-cms init  [--repo DIR] [--force]               detect the site's generator and write cms.config.yaml
  git-cms --help                                     show this help

Defaults: --host 127.0.0.1, --port 4321 (0 picks a free port).
Environment: CMS_EDIT_PASSWORD (or EDIT_PASSWORD), CMS_SESSION_SECRET, CMS_TRUST_PROXY,
CMS_GIT_ON_PUBLISH, NODE_ENV.
`

const DEFAULT_HOST = '127.0.0.1'
const DEFAULT_PORT = 4321

/** Bad command-line usage: printed with the usage text, exit code 2. */
class UsageError extends Error {}

interface Invocation {
  command: 'serve' | 'demo' | 'init' | 'help'
  repo: string | undefined
  host: string
  port: number
  force: boolean
  /** `--clone URL`: make DIR a clone of the site's remote first. */
  clone?: string
  /** `--proxy URL`: the generator dev server whose site is served beside the API. */
  proxy?: string
  /** `--site DIR`: the built site folder served beside the API. */
  site?: string
}

/** Runs the command line until the server has shut down or refused to start. */
export async function main (argv: string[], env: NodeJS.ProcessEnv, streams: CliStreams = process): Promise<number> {
  let invocation: Invocation
  try {
    invocation = parseInvocation(argv)
  } catch (err) {
    streams.stderr.write(`git-cms: ${(err as Error).message}\n\n${USAGE}`)
    return EXIT_USAGE
  }
  if (invocation.command === 'help') {
    streams.stdout.write(USAGE)
    return EXIT_OK
  }
  if (invocation.command === 'init') return await runInit(invocation, streams)
  // Loaded only now (--help answers without the service); `git --version` runs meanwhile.
  const gitChecked = requireGitVersion()
  gitChecked.catch(() => {})
  const [{ openCms }, { startServer }, demo] = await Promise.all([
    import('./cms.js'), import('./server.js'), invocation.command === 'demo' ? import('./demo/site.js') : null
  ])
  let demoRepo: string | null = null
  let opened: OpenCms | null = null
  let running: RunningServer
  try {
    await gitChecked
    let password: string | null = null
    if (demo !== null) {
      demoRepo = await demo.createDemoRepo()
      const given = readRuntimeSettings(env).password
      // A password the user chose is never echoed; a generated one must be, or nobody could sign in.
      password = given === null ? randomBytes(12).toString('base64url') : null
      opened = await openCms({ repoDir: demoRepo, env: { ...env, CMS_EDIT_PASSWORD: given ?? password ?? '' } })
      opened.cms.app.use(demo.demoSite(opened.services))
    } else if (invocation.clone !== undefined) {
      const { cloneInstance } = await import('./remote/clone-instance.js')
      await cloneInstance(invocation.clone, invocation.repo!, env)
      opened = await openCms({ repoDir: invocation.repo!, env, defaultRemote: 'origin' })
    } else {
      opened = await openCms({ repoDir: invocation.repo ?? process.cwd(), env })
    }
    const cms = opened.cms
    const site = await siteOf(opened, invocation)
    // A missing password is the log's warning (createAuth), as for every embedding.
    if (opened.services.runtime.secretGenerated) {
      streams.stderr.write('git-cms: warning: CMS_SESSION_SECRET is not set; using a random secret, so sessions end when this process stops\n')
    }
    running = await startServer({ cms, host: invocation.host, port: invocation.port }).catch((err: unknown) => {
      throw new Error(`cannot listen on ${invocation.host}:${invocation.port}: ${oneLine(err)}`)
    })
    if (site !== null) running.server.on('upgrade', site)
    streams.stdout.write(`git-cms listening on ${running.url}\n`)
    if (invocation.proxy !== undefined || invocation.site !== undefined) streams.stdout.write(`site: ${running.url}/ (${invocation.proxy ?? invocation.site ?? ''})\n`)
    if (demoRepo !== null) {
      streams.stdout.write(`password: ${password ?? '(the one set in CMS_EDIT_PASSWORD or EDIT_PASSWORD)'}\nsite: ${running.url}/\nadmin: ${running.url}${cms.config.mountPath}\nrepository: ${demoRepo}\n`)
    } else {
      streams.stdout.write(`admin: ${running.url}${cms.config.mountPath}\n`)
    }
  } catch (err) {
    // An instance that opened but could not serve (its site, its port) is closed before its demo copy goes.
    await opened?.cms.close().catch(() => {})
    if (demoRepo !== null) await rm(demoRepo, { recursive: true, force: true }).catch(() => {})
    streams.stderr.write(`git-cms: ${oneLine(err)}\n`)
    return EXIT_REFUSED
  }
  const code = await untilSignal(running, streams)
  if (demoRepo !== null) await rm(demoRepo, { recursive: true, force: true }).catch(() => {})
  return code
}

/** `init`: writes cms.config.yaml and prints what it found; a refusal is one line and exit 1. */
async function runInit (invocation: Invocation, streams: CliStreams): Promise<number> {
  const { initSite, formatInitSummary } = await import('./init/init-site.js')
  try {
    const result = await initSite({ repoDir: invocation.repo ?? process.cwd(), force: invocation.force })
    streams.stdout.write(formatInitSummary(result))
    return EXIT_OK
  } catch (err) {
    streams.stderr.write(`git-cms: ${oneLine(err)}\n`)
    return EXIT_REFUSED
  }
}

function parseInvocation (argv: string[]): Invocation {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      repo: { type: 'string' },
      clone: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      force: { type: 'boolean' },
      proxy: { type: 'string' },
      site: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) return { command: 'help', repo: undefined, host: DEFAULT_HOST, port: DEFAULT_PORT, force: false }
  const [command, ...rest] = positionals
  if (command === undefined) throw new UsageError('missing command')
  if (command !== 'serve' && command !== 'demo' && command !== 'init') throw new UsageError(`unknown command '${command}'`)
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0] ?? ''}'`)
  if (command === 'demo' && values.repo !== undefined) throw new UsageError('demo serves its own copy of the example site; --repo is for serve')
  if (command === 'init' && (values.port !== undefined || values.host !== undefined)) throw new UsageError('init writes a config and serves nothing; --port and --host are for serve and demo')
  for (const [flag, only] of [['force', 'init'], ['proxy', 'serve'], ['site', 'serve'], ['clone', 'serve']] as const) {
    if (values[flag] !== undefined && command !== only) throw new UsageError(`--${flag} is for ${only}`)
  }
  for (const [flag, what] of [['host', 'a value'], ['repo', 'a value'], ['proxy', 'a URL'], ['site', 'a folder'], ['clone', 'a URL']] as const) {
    if (values[flag] === '') throw new UsageError(`--${flag} needs ${what}`)
  }
  if (values.proxy !== undefined && values.site !== undefined) throw new UsageError('--proxy and --site cannot be combined: the site comes from a dev server or from a folder')
  if (values.proxy !== undefined && !/^https?:\/\/[^/?#]/i.test(values.proxy)) throw new UsageError(`--proxy needs an http:// or https:// address, got '${values.proxy}'`)
  if (values.clone !== undefined && values.repo === undefined) throw new UsageError('--clone needs --repo DIR (an empty or missing directory)')
  const { repo, clone, proxy, site } = values
  return { command, repo, host: values.host ?? DEFAULT_HOST, port: parsePort(values.port), force: values.force === true, clone, proxy, site }
}

function parsePort (value: string | undefined): number {
  if (value === undefined) return DEFAULT_PORT
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a number from 0 to 65535, got '${value}'`)
  return Number(value)
}

/** Mounts `--proxy`'s or `--site`'s site after git-cms's own routes; the WebSocket upgrade listener for `--proxy`. */
async function siteOf (opened: OpenCms, invocation: Invocation): Promise<Parameters<RunningServer['server']['on']>[1] | null> {
  if (invocation.proxy === undefined && invocation.site === undefined) return null
  const { siteMiddleware, siteFolder, upstreamOrigin, upgradeForwarder } = await import('./http/site-proxy.js')
  if (invocation.proxy !== undefined) {
    const upstream = upstreamOrigin(invocation.proxy)
    opened.cms.app.use(siteMiddleware(opened.services, { proxy: upstream }))
    return upgradeForwarder(upstream, opened.cms.config)
  }
  opened.cms.app.use(siteMiddleware(opened.services, { folder: await siteFolder(invocation.site ?? '.') }))
  return null
}

/** Waits for SIGTERM or SIGINT, then drains the server; resolves with the exit code. */
async function untilSignal (running: RunningServer, streams: CliStreams): Promise<number> {
  return await new Promise<number>(resolve => {
    let stopping = false
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        streams.stderr.write(`git-cms: ${signal} again; still finishing the requests in flight\n`)
        return
      }
      stopping = true
      running.close().then(() => {
        process.off('SIGTERM', onSignal)
        process.off('SIGINT', onSignal)
        resolve(EXIT_OK)
      }, (err: unknown) => {
        streams.stderr.write(`git-cms: error while shutting down: ${oneLine(err)}\n`)
        resolve(EXIT_REFUSED)
      })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}

/** An error as one line: start-up refusals are printed without a stack. */
function oneLine (err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.split('\n')[0] ?? message
}

/** The oldest git release git-cms supports, as [major, minor]: remote sync replays commits with `git merge-tree --write-tree`. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 38]

/** Checks `git --version` output; throws StartupError naming found and needed versions when older. */
export function checkGitVersion (output: string): void {
  const needed = `git-cms needs git ${MIN_GIT_VERSION.join('.')} or later (for merge-tree --write-tree)`
  const m = /^git version (\d+)\.(\d+)(\S*)/.exec(output.trim())
  if (m === null) throw new StartupError(`cannot tell git's version from '${output.trim().split('\n')[0] ?? ''}'; ${needed}`)
  const [major, minor] = [Number(m[1]), Number(m[2])]
  const [needMajor, needMinor] = MIN_GIT_VERSION
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return
  throw new StartupError(`git ${m[1]!}.${m[2]!}${m[3]!} found; ${needed}`)
}

/** Runs `git --version` and checks it; throws StartupError when git is missing or too old. */
export async function requireGitVersion (): Promise<void> {
  const { stdout } = await promisify(execFile)('git', ['--version']).catch((err: Error) => {
    throw new StartupError(`cannot run git (${err.message.split('\n')[0] ?? ''}); git-cms needs git ${MIN_GIT_VERSION.join('.')} or later`)
  })
  checkGitVersion(stdout)
}
