/**
 * The git CLI for remote work and publish commits: one child process per step (never per read), in
 * the environment `gitEnv` allows, with a silence timeout and every message git writes redacted
 * before anyone sees it.
 */
import type { Logger } from 'pino'
import { gitEnv, runGit } from './storage/git-process.js'

/** How long one git command may stay silent before it is stopped (a hook that hangs must not hang publish). */
const GIT_TIMEOUT_MS = 60_000

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

  /** Runs one git command and gives its output; throws with git's (redacted) message, its stdout included. */
  async run (args: string[], opts: { input?: Buffer | string, env?: Record<string, string> } = {}): Promise<string> {
    const started = Date.now()
    const env = { ...gitEnv(this.#source), ...opts.env }
    const { code, stdout, stderr } = await runGit(this.#baseDir, args, { timeoutMs: this.#timeoutMs, idle: true, input: opts.input, env })
    if (code === 0) {
      this.#logged(args, started, { exit: 0 })
      return stdout
    }
    const text = code === null ? `git timed out after ${this.#timeoutMs} ms` : `${stderr}\n${stdout}`
    const message = this.#redact(text.trim().split('\n').filter(Boolean).slice(0, 8).join('\n')) || `git failed (exit code ${code})`
    this.#logged(args, started, { exit: code ?? -1, error: message })
    throw new Error(message)
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

  #logged (args: string[], started: number, outcome: { exit: number, error?: string }): void {
    if (this.#log?.isLevelEnabled('debug') !== true) return
    this.#log.debug({ git: this.#redact(args.join(' ')), ms: Date.now() - started, ...outcome }, 'git command')
  }

  #redact (text: string): string {
    return redactSecrets(text, [...this.#secrets].sort((a, b) => b.length - a.length))
  }
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

/** The userinfo of `scheme://userinfo@` (it may hold a token); the scheme is looked at from `://` back, once. */
const URL_USERINFO = /(?<=\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi
/** The query of a URL (`?private_token=...`); a git remote's query is only ever a credential. */
const URL_QUERY = /(?<=\b[a-z][a-z0-9+.-]*:\/\/[^\s?#'"]+\?)[^\s#'"]*/gi

/**
 * Removes credentials from text git wrote before it is logged or returned: URL userinfo and query,
 * well-known token shapes (GitHub, GitLab, Bitbucket, bearer) and any secret the caller knows.
 */
export function redactSecrets (text: string, secrets: readonly string[] = []): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('***')
  }
  out = out.replace(URL_USERINFO, '***@')
  out = out.replace(URL_QUERY, '***')
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, '***')
  return out
}

/** The secret parts of a remote URL (userinfo and query values), raw and percent-decoded. */
export function secretsOfUrl (url: string): string[] {
  const query = /\?([^#]*)/.exec(url.trim())?.[1] ?? ''
  const parts = query.split('&').map(pair => pair.slice(pair.indexOf('=') + 1))
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/@]+)@/i.exec(url.trim())?.[1]
  // The whole userinfo, and its password: with one, the user name is usually a plain word (`oauth2`,
  // `git`) and stays; without one (no `:`, the slice is the whole), the user name is the token.
  if (userinfo !== undefined) parts.push(userinfo, userinfo.slice(userinfo.indexOf(':') + 1))
  const decoded = parts.map(p => { try { return decodeURIComponent(p) } catch { return p } })
  // Long parts first, so a token is removed whole before a shorter piece of it could be.
  return [...new Set([...parts, ...decoded])].filter(p => p.length >= 4).sort((a, b) => b.length - a.length)
}
