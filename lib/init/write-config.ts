/**
 * Writes the `cms.config.yaml` that init planned: rendered with the `yaml` package, created
 * exclusively (an existing config of any kind is never replaced unless forced), durable on disk.
 */
import { link, lstat, open, rm, unlink } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { Document } from 'yaml'
import { CONFIG_FILES } from '../config.js'
import { StartupError } from '../errors.js'
import { syncDirectory, writeFileAtomic, TEMP_PREFIX } from '../storage/atomic-write.js'
import type { CollectionPlan } from './infer-collections.js'

/** The file init writes. */
export const INIT_CONFIG_FILE = 'cms.config.yaml'

/** Renders the planned collections as the text of `cms.config.yaml` (section 11's keys). */
export function renderConfig (collections: CollectionPlan[], header: string): string {
  const defined: Record<string, Record<string, unknown>> = {}
  for (const c of collections) {
    const definition: Record<string, unknown> = { label: c.label }
    if (c.folder !== null) definition.folder = c.folder
    if (c.files !== null) definition.files = c.files
    definition.format = c.format
    if (c.frontmatter !== null) definition.frontmatter = c.frontmatter
    if (c.nested) definition.nested = true
    if (c.indexFile !== null) definition.indexFile = c.indexFile
    if (c.files !== null) definition.creatable = false
    if (c.titleField !== null) definition.titleField = c.titleField
    if (c.i18n !== null) definition.i18n = structuredClone(c.i18n)
    definition.schema = c.schema
    defined[c.name] = definition
  }
  const doc = new Document({ collections: defined })
  doc.commentBefore = header.split('\n').map(line => ` ${line}`).join('\n')
  return doc.toString({ lineWidth: 0 })
}

/** The config files already in the repository. */
async function existingConfigs (repoDir: string): Promise<string[]> {
  const found: string[] = []
  for (const name of CONFIG_FILES) {
    try {
      // lstat: a link named like a config counts too, even a dangling one.
      await lstat(path.join(repoDir, name))
      found.push(name)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') found.push(name)
    }
  }
  return found
}

/**
 * Writes `cms.config.yaml`: without `force` exclusively (an existing config means StartupError),
 * with `force` atomically, removing the other config files. Returns the config files replaced.
 */
export async function writeConfig (repoDir: string, text: string, force: boolean): Promise<string[]> {
  const existing = await existingConfigs(repoDir)
  const target = path.join(repoDir, INIT_CONFIG_FILE)
  if (existing.length > 0 && !force) throw alreadyConfigured(existing)
  if (force) {
    await writeFileAtomic(target, text)
    for (const name of existing) if (name !== INIT_CONFIG_FILE) await rm(path.join(repoDir, name), { force: true })
    return existing
  }
  // Written under a temporary name, then linked into place: link() fails if the target exists,
  // so a config created meanwhile is never replaced.
  const tmp = path.join(repoDir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${INIT_CONFIG_FILE}`)
  try {
    const handle = await open(tmp, 'wx', 0o644)
    try {
      await handle.writeFile(text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await link(tmp, target)
    await syncDirectory(repoDir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw alreadyConfigured([INIT_CONFIG_FILE])
    throw err
  } finally {
    await unlink(tmp).catch(() => {})
  }
  return []
}

function alreadyConfigured (files: string[]): StartupError {
  return new StartupError(`${files.join(', ')} already exists; nothing was written (run init --force to replace it with a new ${INIT_CONFIG_FILE})`)
}
