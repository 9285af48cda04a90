/** `git cms init`: detects the generator, plans the collections, writes `cms.config.yaml` (never over a config unless forced). */
import { lstat, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Document } from 'yaml'
import { existingConfigFiles } from '../config.js'
import { StartupError } from '../errors.js'
import { prepareFileAtomic, writeFileAtomic } from '../storage/atomic-write.js'
import { detectGenerator, GENERATOR_NAMES, type DetectedSite } from './detect-generator.js'
import { inferCollections, type CollectionPlan, type InferredCollections } from './infer-collections.js'

/** The file init writes. */
const INIT_CONFIG_FILE = 'cms.config.yaml'

/** What init did. */
export interface InitResult {
  site: DetectedSite
  inferred: InferredCollections
  /** Config files that --force replaced. */
  replaced: string[]
}

/**
 * Looks at a site and writes its `cms.config.yaml`.
 * @returns what was found and written; throws StartupError when nothing may be written
 */
export async function initSite (opts: { repoDir: string, force: boolean }): Promise<InitResult> {
  const repoDir = path.resolve(opts.repoDir)
  await assertRepository(repoDir)
  const site = await detectGenerator(repoDir)
  const inferred = await inferCollections(repoDir, site.sources)
  const header = [
    `git-cms configuration written by \`git cms init\` for ${withArticle(GENERATOR_NAMES[site.generator])} site${site.configFile === null ? '' : ` (${site.configFile})`}.`,
    'Schemas are inferred from the entries found; edit labels, schemas and rules freely (README: Configuration).'
  ].join('\n')
  const configText = renderConfig(inferred.collections, header)
  const replaced = await writeConfig(repoDir, configText, opts.force)
  return { site, inferred, replaced }
}

/** The name after "a" or "an". */
function withArticle (name: string): string {
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`
}

async function assertRepository (repoDir: string): Promise<void> {
  if (!await stat(repoDir).then(st => st.isDirectory(), () => false)) throw new StartupError(`${repoDir} is not a directory`)
  // A directory, or a file pointing elsewhere (worktrees, submodules).
  const noGit = `${repoDir} is not a git repository (no .git); run git init there first`
  await lstat(path.join(repoDir, '.git')).catch(() => { throw new StartupError(noGit) })
}

/** The summary init prints: generator, collections with their entry counts, what it could not read. */
export function formatInitSummary (result: InitResult): string {
  const { site, inferred } = result
  const lines: string[] = [`Found ${site.generator === 'markdown' ? GENERATOR_NAMES.markdown : `${withArticle(GENERATOR_NAMES[site.generator])} site`}${site.configFile === null ? '' : ` (${site.configFile})`}.`]
  if (inferred.collections.length === 0) {
    lines.push('No content found: no folder holds Markdown, JSON, YAML or TOML files where this generator keeps content.')
  } else {
    lines.push(`${inferred.collections.length} collection${inferred.collections.length === 1 ? '' : 's'}:`)
    const rows = inferred.collections.map(c => {
      const where = c.folder ?? (c.files !== null && c.files.length === 1 ? c.files[0] ?? '' : `${c.files?.length ?? 0} files in ${commonFolder(c.files ?? [])}`)
      const traits = [c.format, c.frontmatter === null ? null : `${c.frontmatter} frontmatter`, c.nested ? 'nested' : null, c.indexFile === null ? null : 'page bundles'].filter(Boolean).join(', ')
      return [c.name, where, traits, `${c.entries.length} ${c.entries.length === 1 ? 'entry' : 'entries'}`]
    })
    const widths = [0, 1, 2].map(i => Math.max(...rows.map(r => (r[i] ?? '').length)))
    for (const row of rows) lines.push(`  ${row.map((cell, i) => i < 3 ? cell.padEnd(widths[i] ?? 0) : cell).join('  ')}`)
  }
  if (inferred.unreadable.length > 0) {
    lines.push(`Could not read ${inferred.unreadable.length} file${inferred.unreadable.length === 1 ? '' : 's'} (listed as unreadable entries until fixed):`)
    for (const u of inferred.unreadable) lines.push(`  ${u.path}: ${u.reason}`)
  }
  if (inferred.badNames.length > 0) {
    lines.push(`${inferred.badNames.length} file name${inferred.badNames.length === 1 ? '' : 's'} cannot be an entry id (rename to edit):`)
    for (const u of inferred.badNames) lines.push(`  ${u.path}: ${u.reason}`)
  }
  if (inferred.links.length > 0) lines.push(`Not followed (symbolic links): ${inferred.links.join(', ')}`)
  if (inferred.truncated.length > 0) lines.push(`Stopped early (too many files or folders too deep) in: ${inferred.truncated.join(', ')}`)
  for (const note of site.notes) lines.push(`Note: ${note}`)
  const replaced = result.replaced.length > 0 ? ` (replaced ${result.replaced.join(', ')})` : ''
  lines.push(`Wrote ${INIT_CONFIG_FILE}${replaced}. Next: CMS_EDIT_PASSWORD=... git-cms serve`)
  return lines.join('\n') + '\n'
}

function commonFolder (files: string[]): string {
  const dirs = new Set(files.map(f => path.posix.dirname(f)))
  return dirs.size === 1 ? `${[...dirs][0] ?? '.'}/` : 'several folders'
}

/** Renders the planned collections as the text of `cms.config.yaml` (section 11's keys). */
function renderConfig (collections: CollectionPlan[], header: string): string {
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

/**
 * Writes `cms.config.yaml`: without `force` exclusively (an existing config means StartupError),
 * with `force` atomically, removing the other config files. Returns the config files replaced.
 */
export async function writeConfig (repoDir: string, text: string, force: boolean): Promise<string[]> {
  const existing = await existingConfigFiles(repoDir)
  const target = path.join(repoDir, INIT_CONFIG_FILE)
  if (existing.length > 0 && !force) throw alreadyConfigured(existing)
  if (force) {
    await writeFileAtomic(target, text)
    for (const name of existing) if (name !== INIT_CONFIG_FILE) await rm(path.join(repoDir, name), { force: true })
    return existing
  }
  // Linked into place: link() fails if the target exists, so a config created meanwhile is never replaced.
  try {
    await (await prepareFileAtomic(target, text)).commit({ exclusive: true })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw alreadyConfigured([INIT_CONFIG_FILE])
    throw err
  }
  return []
}

function alreadyConfigured (files: string[]): StartupError {
  return new StartupError(`${files.join(', ')} already exists; nothing was written (run init --force to replace it with a new ${INIT_CONFIG_FILE})`)
}
