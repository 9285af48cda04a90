/** What the validators generated at build time are made from besides their schemas: ajv's version and draft-07 options. */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'

/** The installed ajv's version, read from node_modules (require's cache keeps it). */
export function ajvVersion (): string {
  return (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version
}

/** Ajv's options for draft-07 collection schemas, but the pattern engine. */
export const DRAFT7_AJV_OPTIONS = { allErrors: true, strict: false } as const

/** The digest the generated draft-07 meta-schema validator records: ajv's version and the options. */
export function draft7MetaDigest (ajvVersion: string): string {
  return createHash('sha256').update(JSON.stringify(['draft-07 meta-schema', ajvVersion, DRAFT7_AJV_OPTIONS])).digest('hex')
}
