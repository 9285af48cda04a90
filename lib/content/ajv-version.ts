/** The installed ajv's version, which the validators generated at build time record. */
import { createRequire } from 'node:module'

let version: string | null = null

/** The installed ajv's version, read once from node_modules. */
export function ajvVersion (): string {
  version ??= (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version
  return version
}
