/**
 * The git CLI for remote work and publish commits, through simple-git with an explicit environment
 * whitelist, no terminal prompts, a silence timeout, and every message git writes redacted before
 * anyone sees it. One child process per step, never per read. Imports nothing of ours.
 */
import type { Logger } from 'pino'

/** How long one git command may stay silent before it is stopped (a hook that hangs must not hang publish). */
const GIT_TIMEOUT_MS = 60_000

/** What git runs with: the operator's config, credential helpers and SSH agent, never GIT_DIR and its kind. */
const PASSED_ENV = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL',
  'SSH_AUTH_SOCK', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_SSL_CAINFO', 'GIT_SSL_NO_VERIFY',
  'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR'
]

/** Never an editor, a pager or a password prompt: the service runs without a terminal. */
const NO_TERMINAL = { GIT_EDITOR: 'true', EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' }

/** The guarded (`GIT_*` and editor/pager) keys we may pass, a commit's author too; simple-git refuses any other. */
const ALLOWED_GIT_ENV = [...PASSED_ENV.filter(k => k.startsWith('GIT_')), ...Object.keys(NO_TERMINAL), 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE']

/** The editor, pager, config and SSH keys are ours or the operator's own environment, passed on as they are. */
const UNSAFE = { allowUnsafeEditor: true, allowUnsafePager: true, allowUnsafeConfigPaths: true, allowUnsafeSshCommand: true }

/** Where git runs and with what. */
export interface GitRunnerOptions {
  /** The working tree git runs in (`--clone` runs in its parent). */
  baseDir: string
  /** Silence limit of one command (default 60 s). */
  timeoutMs?: number
  /** The environment to take the whitelisted variables from (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Told of each command, its duration and outcome at `debug` level (the arguments, never the input). */
  log?: Logger
}

/** Runs git commands in one repository and redacts what they say. */
export class GitRunner {
  readonly #baseDir: string
  readonly #timeoutMs: number
  readonly #source: NodeJS.ProcessEnv | undefined
  readonly #secrets = new Set<string>()
  readonly #log: Logger | undefined
  #simpleGit: Promise<typeof import('simple-git')> | null = null

  constructor (opts: GitRunnerOptions) {
    this.#baseDir = opts.baseDir
    this.#timeoutMs = opts.timeoutMs ?? GIT_TIMEOUT_MS
    this.#log = opts.log
    this.#source = opts.env
  }

  /** Adds values that must never appear in a message (the credentials of a remote URL). */
  rememberUrl (url: string): void {
    for (const s of secretsOfUrl(url)) this.#secrets.add(s)
  }

  /** Runs one git command and gives its output; throws with git's (redacted) message. */
  async run (args: string[], opts: { input?: Buffer | string, env?: Record<string, string> } = {}): Promise<string> {
    const result = await this.#exec(args, opts)
    if ('error' in result) throw result.error
    return result.out
  }

  /** The committer for a commit's environment: the fallback unless git's config or environment names one. */
  async committerEnv (name: string, email: string): Promise<Record<string, string>> {
    const configured = await this.run(['config', '--get-regexp', '^user\\.(name|email)$']).catch(() => '')
    const env: Record<string, string> = {}
    const source = this.#source ?? process.env
    if (!/^user\.name /m.test(configured) && source.GIT_COMMITTER_NAME === undefined) env.GIT_COMMITTER_NAME = name
    if (!/^user\.email /m.test(configured) && source.GIT_COMMITTER_EMAIL === undefined) env.GIT_COMMITTER_EMAIL = email
    return env
  }

  async #exec (args: string[], opts: { input?: Buffer | string, env?: Record<string, string> }): Promise<{ out: string } | { error: Error, exitCode: number }> {
    // simple-git loads on the first git step, not at start-up.
    this.#simpleGit ??= import('simple-git')
    const { simpleGit } = await this.#simpleGit
    let exitCode = 0
    const git = simpleGit({
      baseDir: this.#baseDir,
      timeout: { block: this.#timeoutMs },
      // Done when the output closes: simple-git's default, 50 ms after exit, returned cut output on a busy loop.
      completion: { onClose: true, onExit: false },
      allowEnvironment: ALLOWED_GIT_ENV,
      unsafe: UNSAFE,
      ...(opts.input !== undefined ? { input: () => opts.input } : {}),
      // A non-zero exit is a failure even with an empty stderr; its stdout is part of the message.
      errors: (error: Buffer | Error | undefined, result: { exitCode: number, stdOut: Buffer[], stdErr: Buffer[] }) => {
        exitCode = result.exitCode
        if (result.exitCode === 0 || (error instanceof Error && /block timeout/.test(error.message))) return error
        return Buffer.from(Buffer.concat(result.stdErr).toString() + '\n' + Buffer.concat(result.stdOut).toString())
      }
    }).env({ ...gitEnv(this.#source), ...opts.env })
    const started = Date.now()
    try {
      const out = await git.raw(args)
      this.#logged(args, started, { exit: 0 })
      return { out }
    } catch (err) {
      const error = new Error(this.#message(err))
      this.#logged(args, started, { exit: exitCode, error: error.message })
      return { error, exitCode }
    }
  }

  #logged (args: string[], started: number, outcome: { exit: number, error?: string }): void {
    if (this.#log?.isLevelEnabled('debug') !== true) return
    this.#log.debug({ git: this.#redact(args.join(' ')), ms: Date.now() - started, ...outcome }, 'git command')
  }

  #message (err: unknown): string {
    const text = err instanceof Error ? err.message : String(err)
    const clean = /block timeout/.test(text) ? `git timed out after ${this.#timeoutMs} ms` : text
    return this.#redact(clean.trim().split('\n').filter(Boolean).slice(0, 8).join('\n')) || 'git failed'
  }

  #redact (text: string): string {
    return redactSecrets(text, [...this.#secrets].sort((a, b) => b.length - a.length))
  }
}

/**
 * The environment every git process of ours runs in: the whitelisted variables, and NO_TERMINAL's.
 * @param source the environment to take them from (default `process.env`)
 * @returns a new object
 */
export function gitEnv (source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const k of PASSED_ENV) {
    const v = source[k]
    if (v !== undefined) env[k] = v
  }
  return { ...env, ...NO_TERMINAL }
}

/** Token shapes of the common git hosts, redacted wherever they appear. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{16,}\b/g,
  /\bgl(?:dt|rt|cbt|ptt|ft|imt|agent|oas)-[A-Za-z0-9_-]{16,}\b/g,
  /\bATBB[A-Za-z0-9_-]{20,}\b/g,
  /\b(?:Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{12,}/gi
]

/** `scheme://userinfo@` in a URL; the userinfo may hold a token. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi
/** The query of a URL (`?private_token=...`); a git remote's query is only ever a credential. */
const URL_QUERY = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#'"]+)\?[^\s#'"]*/gi

/**
 * Removes credentials from text git wrote before it is logged or returned: URL userinfo and query,
 * well-known token shapes (GitHub, GitLab, Bitbucket, bearer) and any secret the caller knows.
 */
export function redactSecrets (text: string, secrets: readonly string[] = []): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('***')
  }
  out = out.replace(URL_USERINFO, '$1***@')
  out = out.replace(URL_QUERY, '$1?***')
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, '***')
  return out
}

/** The secret parts of a remote URL (userinfo and query values), raw and percent-decoded. */
export function secretsOfUrl (url: string): string[] {
  const query = /\?([^#]*)/.exec(url.trim())?.[1] ?? ''
  const queryValues = query.split('&').map(pair => pair.slice(pair.indexOf('=') + 1)).filter(v => v.length >= 4)
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/@]+)@/i.exec(url.trim())
  if (m === null) return longestFirst(withDecoded(queryValues))
  const userinfo = m[1]!
  // With a password, the user name is usually a plain word (`oauth2`, `git`) and stays; without
  // one, the user name is the token (`https://<token>@github.com`).
  const colon = userinfo.indexOf(':')
  const parts = colon === -1 ? [userinfo] : [userinfo, userinfo.slice(colon + 1)]
  return longestFirst(withDecoded([...parts, ...queryValues]))
}

function withDecoded (parts: string[]): string[] {
  return [...parts, ...parts.map(p => { try { return decodeURIComponent(p) } catch { return p } })]
}

/** Long parts first, so a token is removed whole before a shorter piece of it could be. */
function longestFirst (parts: string[]): string[] {
  return [...new Set(parts)].filter(p => p.length >= 4).sort((a, b) => b.length - a.length)
}
