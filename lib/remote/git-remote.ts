/**
 * The git CLI for remote work (fetch, push, fast-forward, ref updates), through simple-git with an
 * explicit environment whitelist, no terminal prompts, a silence timeout, and every message git
 * writes redacted before anyone sees it. One child process per remote step, never per read.
 */
import type { SimpleGit } from 'simple-git'
import type { Logger } from 'pino'
import { redactSecrets, secretsOfUrl } from './redact.js'

/** How long one git command may stay silent before it is stopped. */
const GIT_TIMEOUT_MS = 60_000

/**
 * A command is done when its output closes, not 50 ms after exit (simple-git's default), which on a
 * busy event loop returned cut output; a silent command is still stopped by the timeout.
 */
const COMPLETE_ON_CLOSE = { onClose: true, onExit: false } as const

/** A git command that failed; its message is already redacted. */
export class GitCommandError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'GitCommandError'
  }
}

/**
 * What git runs with: enough to find the operator's config, credential helpers and SSH agent, and
 * nothing that points it at another repository (GIT_DIR, GIT_INDEX_FILE, ...).
 */
const PASSED_ENV = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL',
  'SSH_AUTH_SOCK', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_SSL_CAINFO', 'GIT_SSL_NO_VERIFY',
  'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR'
]

/** The guarded (`GIT_*` and editor/pager) keys we may pass; simple-git refuses any other. */
const ALLOWED_GIT_ENV = [
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_EDITOR', 'GIT_PAGER',
  'GIT_TERMINAL_PROMPT', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_SSL_CAINFO',
  'GIT_SSL_NO_VERIFY', 'PAGER', 'EDITOR'
]

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
  readonly #env: Record<string, string>
  readonly #secrets = new Set<string>()
  readonly #log: Logger | undefined
  #git: Promise<typeof import('simple-git')> | null = null

  constructor (opts: GitRunnerOptions) {
    this.#baseDir = opts.baseDir
    this.#timeoutMs = opts.timeoutMs ?? GIT_TIMEOUT_MS
    this.#log = opts.log
    const env: Record<string, string> = {}
    for (const k of PASSED_ENV) {
      const v = (opts.env ?? process.env)[k]
      if (v !== undefined) env[k] = v
    }
    // Never an editor, a pager or a password prompt: the service runs without a terminal.
    Object.assign(env, { GIT_EDITOR: 'true', EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' })
    this.#env = env
  }

  /** Adds values that must never appear in a message (the credentials of a remote URL). */
  rememberUrl (url: string): void {
    for (const s of secretsOfUrl(url)) this.#secrets.add(s)
  }

  /**
   * Redacts a message with the known secrets and token patterns.
   * @returns the text without credentials
   */
  redact (text: string): string {
    return redactSecrets(text, [...this.#secrets].sort((a, b) => b.length - a.length))
  }

  /** Runs one git command. */
  async run (args: string[], opts: { input?: Buffer | string, env?: Record<string, string> } = {}): Promise<string> {
    const { git } = await this.#client(opts.input, opts.env)
    const started = Date.now()
    try {
      const out = await git.raw(args)
      this.#logged(args, started, 0)
      return out
    } catch (err) {
      const error = new GitCommandError(this.#message(err))
      this.#logged(args, started, error.message)
      throw error
    }
  }

  /**
   * Runs a command whose exit code is its answer (`merge-base --is-ancestor`, `diff --quiet`).
   * @returns true on exit code 0, false on 1; throws on anything else
   */
  async test (args: string[]): Promise<boolean> {
    const { git, exitCode } = await this.#client(undefined, undefined)
    const started = Date.now()
    try {
      await git.raw(args)
      this.#logged(args, started, 0)
      return true
    } catch (err) {
      this.#logged(args, started, exitCode())
      if (exitCode() === 1) return false
      throw new GitCommandError(this.#message(err))
    }
  }

  #logged (args: string[], started: number, outcome: number | string): void {
    if (this.#log?.isLevelEnabled('debug') !== true) return
    this.#log.debug({ git: this.redact(args.join(' ')), ms: Date.now() - started, ...(typeof outcome === 'number' ? { exit: outcome } : { error: outcome }) }, 'git command')
  }

  async #client (input: Buffer | string | undefined, extra: Record<string, string> | undefined): Promise<{ git: SimpleGit, exitCode: () => number }> {
    // simple-git loads on the first remote step, not at start-up.
    this.#git ??= import('simple-git')
    const { simpleGit } = await this.#git
    const unsafe = { allowUnsafeEditor: true, allowUnsafePager: true, allowUnsafeConfigPaths: true, allowUnsafeSshCommand: true }
    const options = {
      baseDir: this.#baseDir,
      timeout: { block: this.#timeoutMs },
      completion: COMPLETE_ON_CLOSE,
      allowEnvironment: ALLOWED_GIT_ENV,
      unsafe,
      ...(input !== undefined ? { input: () => input } : {}),
      // A non-zero exit is a failure even when git wrote nothing on stderr (`--is-ancestor`, a
      // rejected `push --porcelain`); its stdout is part of the message.
      errors: (error: Buffer | Error | undefined, result: { exitCode: number, stdOut: Buffer[], stdErr: Buffer[] }) => {
        code = result.exitCode
        if (result.exitCode === 0) return error
        return Buffer.from(Buffer.concat(result.stdErr).toString() + '\n' + Buffer.concat(result.stdOut).toString())
      }
    }
    let code = 0
    return { git: simpleGit(options).env({ ...this.#env, ...extra }), exitCode: () => code }
  }

  #message (err: unknown): string {
    const text = err instanceof Error ? err.message : String(err)
    const clean = /block timeout/.test(text) ? `git timed out after ${this.#timeoutMs} ms` : text
    return this.redact(clean.trim().split('\n').filter(Boolean).slice(0, 8).join('\n')) || 'git failed'
  }
}
