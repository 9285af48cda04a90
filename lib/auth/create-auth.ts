/**
 * STUB (to be replaced by the auth implementation): builds the AuthService of an instance.
 */
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { RuntimeSettings } from '../runtime.js'
import type { AuthService } from './types.js'

export interface CreateAuthOptions {
  config: Config
  runtime: RuntimeSettings
  /** `.git/cms`, where revocations persist. */
  stateDir: string
  log: Logger
}

/**
 * Builds authentication for one instance.
 * @param opts config, runtime settings, state directory, logger
 * @returns the AuthService
 */
export async function createAuth (opts: CreateAuthOptions): Promise<AuthService> {
  void opts
  return {
    mode: 'password',
    authorizer: { active: false, can: async () => true },
    identify: async () => null,
    loginUrl: () => null,
    close: async () => {}
  }
}
