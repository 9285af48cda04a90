/**
 * The contract between the HTTP layer and authentication: who is asking, and may they do this.
 */
import type { Context } from 'koa'
import type { AuthAction, Identity } from '../config.js'

export type { AuthAction, Identity }

/** What an authorize check is about. */
export interface AuthTarget {
  collection?: string
  id?: string
}

/** Decides which writes a signed-in editor may perform. */
export interface Authorizer {
  /** True when a policy (adapter `authorize` or declarative `permissions`) is configured. */
  readonly active: boolean
  /**
   * Whether the identity may perform the action (always true without a policy; a throw denies).
   * @param identity the editor
   * @param action the permission asked for
   * @param target the collection and entry concerned
   * @returns true when allowed
   */
  can: (identity: Identity, action: AuthAction, target?: AuthTarget) => Promise<boolean>
}

/** Authentication of one service instance. */
export interface AuthService {
  /** 'password' or 'provider' (an external identity provider is authoritative). */
  readonly mode: 'password' | 'provider'
  readonly authorizer: Authorizer
  /**
   * Identifies the editor making a request (cookie, or the provider adapter); null when not
   * authenticated. Never throws for bad credentials: a bad cookie is just no identity.
   * @param ctx the Koa context
   * @returns the identity, or null
   */
  identify: (ctx: Context) => Promise<Identity | null>
  /** URL of the provider's login page for a return target (provider mode), else null. */
  loginUrl: (redirectTo: string) => string | null
  /**
   * Stops timers and flushes state.
   * @returns resolves when closed
   */
  close: () => Promise<void>
}
