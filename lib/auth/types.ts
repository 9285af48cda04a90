/** The contract between the HTTP layer and authentication: who is asking, and may they do this. */
import type { Context } from 'koa'
import type { AuthAction, Identity } from '../config.js'
import type { SharedDocument } from '../remote/cms-refs-sync.js'

/** Decides which writes a signed-in editor may perform. */
export interface Authorizer {
  /** True when a policy (adapter `authorize` or declarative `permissions`) is configured. */
  readonly active: boolean
  /** Whether the identity may perform the action (always true without a policy; a throw denies). */
  can: (identity: Identity, action: AuthAction, target?: { collection?: string, id?: string }) => Promise<boolean>
}

/** Authentication of one service instance. */
export interface AuthService {
  /** 'password' or 'provider' (an external identity provider is authoritative). */
  readonly mode: 'password' | 'provider'
  readonly authorizer: Authorizer
  /** The editor making a request, or null; a bad cookie is no identity, never a throw. */
  identify: (ctx: Context) => Promise<Identity | null>
  /** URL of the provider's login page for a return target (provider mode), else null. */
  loginUrl: (redirectTo: string) => string | null
  /**
   * Password login: sets a fresh session cookie on success. Throws 409 in provider mode, 503
   * without a configured password, 429 while the client is rate-limited, 401 for a wrong password.
   */
  login: (ctx: Context, password: string, name?: string) => Promise<Identity>
  /**
   * Clears the cookie and, in password mode, revokes its editorId; returns the provider's logout
   * URL (else null). Never throws for a missing or invalid cookie.
   */
  logout: (ctx: Context, redirectTo: string) => Promise<{ redirect: string | null }>
  /** The logouts the instances of a site share on `refs/cms/revocations` (password mode), else null; `onRevoke` hears each local one. */
  readonly sharedRevocations: (SharedDocument & { onRevoke: (listener: () => void) => void }) | null
  /** Flushes state (the revocations); resolves when done. */
  close: () => Promise<void>
}
