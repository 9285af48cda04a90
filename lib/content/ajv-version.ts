/** The installed ajv's version, which the validators generated at build time record. */
import { createRequire } from 'node:module'

/** The installed ajv's version, read from node_modules (require's cache keeps it). */
export function ajvVersion (): string {
  return (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version
}
