/** The process settings that come from the environment, checked once at start-up. */
import { randomBytes } from 'node:crypto'
import { StartupError } from './errors.js'

/** Settings read from the environment. */
export interface RuntimeSettings {
  /** The shared editor password (CMS_EDIT_PASSWORD, else EDIT_PASSWORD); null when unset. */
  password: string | null
  /** The key that signs session cookies. */
  sessionSecret: string
  /** True when the secret was generated for this process (outside production only). */
  secretGenerated: boolean
  trustProxy: boolean
  gitOnPublish: boolean
  /** Milliseconds one Markdown render may take (CMS_RENDER_TIME_LIMIT_MS); unset, BoundedRenderer's default. */
  renderTimeLimitMs?: number
}

/** Reads and checks the environment; throws StartupError when production rules are broken. */
export function readRuntimeSettings (env: NodeJS.ProcessEnv): RuntimeSettings {
  const production = env.NODE_ENV === 'production'
  const password = nonEmpty(env.CMS_EDIT_PASSWORD) ?? nonEmpty(env.EDIT_PASSWORD)
  const secret = nonEmpty(env.CMS_SESSION_SECRET)
  if (production) {
    if (secret === null) throw new StartupError('CMS_SESSION_SECRET must be set when NODE_ENV=production')
    if (secret.length < 32) throw new StartupError('CMS_SESSION_SECRET must be at least 32 characters long')
  }
  if (secret !== null && password !== null && secret === password) {
    throw new StartupError('CMS_SESSION_SECRET must differ from the editor password')
  }
  return {
    password,
    sessionSecret: secret ?? randomBytes(32).toString('base64url'),
    secretGenerated: secret === null,
    trustProxy: env.CMS_TRUST_PROXY === 'true',
    gitOnPublish: env.CMS_GIT_ON_PUBLISH === 'true',
    renderTimeLimitMs: positiveInteger(env.CMS_RENDER_TIME_LIMIT_MS, 'CMS_RENDER_TIME_LIMIT_MS')
  }
}

function positiveInteger (value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n <= 0) throw new StartupError(`${name} must be a positive whole number of milliseconds`)
  return n
}

function nonEmpty (value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value
}
