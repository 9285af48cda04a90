/**
 * The git remote of an instance started with `serve --clone`: the clone's `origin`, unless the
 * site's config names a remote itself.
 */
import type { Config } from '../config.js'

/**
 * The config with `git.remote` set to a default when the site's config names none (pushes of
 * publishes and of `refs/cms/*` then default to on, as with a configured remote).
 * @returns the config (the same object when nothing changes)
 */
export function withDefaultRemote (config: Config, remote: string | undefined): Config {
  if (remote === undefined || config.git.remote !== null) return config
  return Object.freeze({ ...config, git: Object.freeze({ ...config.git, remote, pushOnPublish: true, pushRefs: true }) })
}
