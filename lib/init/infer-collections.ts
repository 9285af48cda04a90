/**
 * Turns a generator's content sources into collections: which files are entries (flat, nested, page
 * bundles), one collection per format (md and mdx together), and a schema inferred from the entries.
 */
import { lstat, readFile, readdir, realpath } from 'node:fs/promises'
import path from 'node:path'
import { inferSchema, type JsonSchema } from '../content/schema-tools.js'
import { REPO_DOCUMENTS, type ContentSource } from './detect-generator.js'
import { isMarkdownFormat, parseEntry, parseMarkdown, type EntryFormat, type FrontmatterKind } from '../content/formats.js'
import { COLLECTION_NAME, collectionLabel, entryIdProblem } from '../storage/names.js'
import { resolvesIntoRepo } from '../storage/safe-path.js'
import { formatOfFile, idOfPath, type EntryLayout } from '../storage/entry-paths.js'
import { isReservedKey } from '../content/reserved-keys.js'
import { TITLE_FIELDS } from '../content/entry-search.js'
import type { InitI18n } from './detect-locales.js'

/** One collection init will write. */
export interface CollectionPlan {
  name: string
  label: string
  /** The folder (folder collections), relative to the repository. */
  folder: string | null
  /** The files (files collections), relative to the repository. */
  files: string[] | null
  format: EntryFormat
  frontmatter: Exclude<FrontmatterKind, 'js'> | null
  nested: boolean
  indexFile: 'index' | null
  titleField: string | null
  schema: JsonSchema
  /** Entry files, relative to the repository (readable or not). */
  entries: string[]
  /** The collection's translations. */
  i18n: InitI18n | null
}

/** A file that looks like an entry but could not be read. */
export interface UnreadableFile {
  path: string
  reason: string
}

/** What inference produced for a whole site. */
export interface InferredCollections {
  collections: CollectionPlan[]
  unreadable: UnreadableFile[]
  /** Symbolic links met inside content folders (never followed). */
  links: string[]
  /** Folders whose walk stopped at the scan limits. */
  truncated: string[]
  /** Entry files whose names cannot be entry ids (the service will not serve them until renamed). */
  badNames: UnreadableFile[]
}

/** Files larger than this are reported unreadable rather than parsed. */
const MAX_ENTRY_BYTES = 2 * 1024 * 1024
/** At most this many entries of a collection are parsed for its schema; the rest are only counted. */
const MAX_SAMPLED = 2000
/** At most this many files are listed per folder (init looks at a site, it does not index it). */
const MAX_FILES = 50_000
/** Folders deeper than this are not walked. */
const MAX_DEPTH = 16
/** Folders that hold tooling, never content, wherever they appear. */
const NEVER_CONTENT = new Set(['node_modules', '.git'])
/** Front-matter keys generators read as per-page switches: never required, even when every sample has one. */
const PER_PAGE_SWITCHES = new Set(['permalink', 'eleventyExcludeFromCollections', 'eleventyComputed', 'eleventyImport', 'draft', 'published', 'layout', 'sitemap', 'aliases', 'outputs', 'headless', 'build', 'cascade', 'pagination', 'redirect_from', 'redirect_to', 'noindex', 'template'])
// eslint-disable-next-line no-control-regex
const UNNAMEABLE_PATH = /[\u0000-\u001f\u007f\\]/

/**
 * Scans every source and plans its collections.
 * @returns the collections (only where entries are), unreadable files, links not followed
 */
export async function inferCollections (repoDir: string, sources: ContentSource[]): Promise<InferredCollections> {
  const result: InferredCollections = { collections: [], unreadable: [], links: [], truncated: [], badNames: [] }
  const taken = new Set<string>()
  const claimed = new Set<string>()
  for (const source of sources) {
    // cms.config cannot name such a folder (serve refuses a control character or a backslash in a path).
    if (UNNAMEABLE_PATH.test(source.folder)) {
      result.badNames.push({ path: source.folder, reason: 'its folder name holds a control character or a backslash, which cms.config cannot name' })
      continue
    }
    const asFiles = source.kind === 'files' || (source.folder === '.' && !source.recursive)
    const scan = await scanFolder(repoDir, source.folder, !asFiles && source.recursive)
    // Locale folders only, when no locale sits at the root (the service reads no other file there).
    if (source.roots !== undefined) scan.files = scan.files.filter(file => source.roots?.some(root => file.startsWith(root + '/')) === true)
    const at = (rel: string): string => source.folder === '.' ? rel : `${source.folder}/${rel}`
    if (scan.leavesRepository) result.links.push(source.folder)
    result.links.push(...scan.links.map(at))
    if (scan.truncated) result.truncated.push(source.folder)
    const groups = formatGroups(scan.files, source, asFiles)
    const ordered = [...groups.values()].sort((a, b) => b.entries.length - a.entries.length)
    for (const group of ordered) {
      const entries = group.entries.map(at).filter(rel => !claimed.has(rel) && !(asFiles && UNNAMEABLE_PATH.test(rel)))
      if (entries.length === 0) continue
      for (const rel of entries) claimed.add(rel)
      // Only a source of page bundles makes a group of them (formatGroups).
      const indexFile = group.bundles ? 'index' : null
      const layout: EntryLayout = { dir: repoDir, format: group.format, nested: true, indexFile, files: null }
      for (const file of group.entries) {
        // The service's id rule (a listed file's id is its name).
        const id = asFiles ? path.posix.basename(file, path.posix.extname(file)).normalize('NFC') : idOfPath(layout, file)
        const problem = id === null ? null : entryIdProblem(id)
        if (problem !== null) result.badNames.push({ path: at(file), reason: `its id ${problem}` })
      }
      const name = uniqueName(group === ordered[0] ? source.name : `${source.name}-${group.format}`, taken)
      const fields = await readFields(repoDir, group.format, entries, result.unreadable)
      result.collections.push({
        name,
        label: collectionLabel(name),
        folder: asFiles ? null : source.folder,
        files: asFiles ? entries : null,
        format: group.format,
        frontmatter: isMarkdownFormat(group.format) ? mostUsed(fields.kinds) ?? 'yaml' : null,
        nested: group.nested || (source.i18n !== undefined && source.i18n.layout !== 'suffix'),
        indexFile,
        titleField: titleFieldOf(fields.samples),
        schema: schemaOf(group.format, fields.samples),
        entries,
        i18n: source.i18n ?? null
      })
    }
  }
  return result
}

/** What a walk found below one folder (paths relative to that folder, `/`-separated). */
interface FolderScan {
  /** Regular files, sorted. */
  files: string[]
  /** Symbolic links (files or folders), never followed. */
  links: string[]
  /** True when the walk stopped at MAX_FILES or MAX_DEPTH. */
  truncated: boolean
  /** True when the folder exists but is a link, or leads outside the repository (not walked). */
  leavesRepository: boolean
}

/** Lists the files below a folder, skipping hidden names; a symbolic link is reported, never followed. */
async function scanFolder (repoDir: string, folder: string, recursive: boolean): Promise<FolderScan> {
  const scan: FolderScan = { files: [], links: [], truncated: false, leavesRepository: false }
  const root = path.resolve(repoDir, folder)
  const isDir = await lstat(root).then(info => info.isDirectory(), () => null)
  if (isDir !== true || !resolvesIntoRepo(await realpath(repoDir), root)) {
    scan.leavesRepository = isDir !== null
    return scan
  }
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    let dirents
    try { dirents = await readdir(dir, { withFileTypes: true }) } catch { return }
    dirents.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    for (const dirent of dirents) {
      if (dirent.name.startsWith('.') || NEVER_CONTENT.has(dirent.name)) continue
      const childRel = rel === '' ? dirent.name : `${rel}/${dirent.name}`
      if (dirent.isSymbolicLink()) { scan.links.push(childRel); continue }
      if (dirent.isFile()) {
        if (scan.files.length >= MAX_FILES) { scan.truncated = true; return }
        scan.files.push(childRel)
      } else if (dirent.isDirectory() && recursive) {
        if (depth >= MAX_DEPTH) { scan.truncated = true; continue }
        await walk(path.join(dir, dirent.name), childRel, depth + 1)
      }
    }
  }
  await walk(root, '', 0)
  return scan
}

interface FormatGroup {
  format: EntryFormat
  /** Relative to the source folder. */
  entries: string[]
  nested: boolean
  bundles: boolean
  /** How many of the entries are .mdx files. */
  mdx: number
}

/** Adds a file to its format's group; md and mdx share one, named after most of its files. */
function addTo (groups: Map<EntryFormat, FormatGroup>, format: EntryFormat, file: string): FormatGroup {
  const key = isMarkdownFormat(format) ? 'md' : format
  const group = groups.get(key) ?? { format, entries: [], nested: false, bundles: false, mdx: 0 }
  group.entries.push(file)
  if (format === 'mdx') group.mdx++
  group.format = isMarkdownFormat(format) ? (group.mdx * 2 > group.entries.length ? 'mdx' : 'md') : format
  groups.set(key, group)
  return group
}

/** A source's entries by format: with page bundles a subfolder with `index.<md|mdx>` is one entry; a subfolder makes it nested. */
function formatGroups (files: string[], source: ContentSource, asFiles: boolean): Map<EntryFormat, FormatGroup> {
  const isIndexPage = (file: string): boolean => isMarkdownFormat(formatOfFile(file, null)) && path.posix.basename(file, path.posix.extname(file)) === 'index'
  const bundleDirs = new Set(source.bundles === true ? files.filter(isIndexPage).map(file => path.posix.dirname(file)).filter(dir => dir !== '.') : [])
  const insideBundle = (file: string): string | null => {
    let dir = path.posix.dirname(file)
    let outermost: string | null = null
    while (dir !== '.') {
      if (bundleDirs.has(dir)) outermost = dir
      dir = path.posix.dirname(dir)
    }
    return outermost
  }
  const groups = new Map<EntryFormat, FormatGroup>()
  for (const file of files) {
    const format = formatOfFile(file, null)
    if (format === null || (source.pagesOnly && !isMarkdownFormat(format))) continue
    if (asFiles && source.folder === '.' && REPO_DOCUMENTS.test(file)) continue
    const bundle = insideBundle(file)
    const isBundleIndex = bundle !== null && path.posix.dirname(file) === bundle && isIndexPage(file)
    const group = addTo(groups, format, file)
    if (isBundleIndex) group.bundles = true
    if (isBundleIndex ? (bundle ?? '').includes('/') : file.includes('/')) group.nested = true
  }
  return groups
}

async function readFields (repoDir: string, format: EntryFormat, entries: string[], unreadable: UnreadableFile[]): Promise<{ samples: Array<Record<string, unknown>>, kinds: Array<Exclude<FrontmatterKind, 'js'>> }> {
  const samples: Array<Record<string, unknown>> = []
  const kinds: Array<Exclude<FrontmatterKind, 'js'>> = []
  for (const rel of entries.slice(0, MAX_SAMPLED)) {
    const full = path.join(repoDir, rel)
    try {
      const info = await lstat(full)
      if (info.size > MAX_ENTRY_BYTES) throw new Error(`larger than ${MAX_ENTRY_BYTES / 1024 / 1024} MiB`)
      const text = await readFile(full, 'utf8')
      // Through the service's own format layer, so init sees a file as the service will (a Markdown body left out).
      const markdown = isMarkdownFormat(format)
      const { data, kind } = markdown ? parseMarkdown(text) : { data: parseEntry(format, text), kind: null }
      samples.push(Object.fromEntries(Object.entries(data).filter(([key]) => !isReservedKey(key) && !(markdown && key === 'body'))))
      // New files get YAML, TOML or JSON: a site's `---js` files keep theirs.
      if (kind !== null && kind !== 'js') kinds.push(kind)
    } catch (err) {
      unreadable.push({ path: rel, reason: (err as Error).message.split('\n')[0] ?? 'unreadable' })
    }
  }
  return { samples, kinds }
}

/** The inferred schema, with `required` listing the fields every readable entry has. */
function schemaOf (format: EntryFormat, samples: Array<Record<string, unknown>>): JsonSchema {
  const schema = inferSchema(samples, isMarkdownFormat(format))
  const properties = schema.properties as Record<string, JsonSchema>
  const required = samples.length === 0 ? [] : Object.keys(properties).filter(key => !PER_PAGE_SWITCHES.has(key) && samples.every(s => Object.hasOwn(s, key)))
  for (const [key, property] of Object.entries(properties)) {
    // Only ever empty (`image:`): any text may go there later.
    if (property.type === 'null') properties[key] = { type: ['string', 'null'] }
    if (property.type === 'array') {
      const items = samples.flatMap(s => Array.isArray(s[key]) ? s[key] as unknown[] : [])
      if (items.length > 0 && items.every(item => typeof item === 'string')) properties[key] = { type: 'array', items: { type: 'string' } }
    }
  }
  return required.length > 0 ? { ...schema, required } : schema
}

/** The first of the title fields every sample has as text. */
function titleFieldOf (samples: Array<Record<string, unknown>>): string | null {
  if (samples.length === 0) return null
  return TITLE_FIELDS.find(key => samples.every(s => typeof s[key] === 'string')) ?? null
}

function mostUsed<T> (values: T[]): T | null {
  const counts = new Map<T, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  let best: T | null = null
  for (const [v, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = v
  return best
}

/** A valid collection name from a folder name (`_posts` -> `posts`), unique within the config. */
function uniqueName (suggested: string, taken: Set<string>): string {
  let base = suggested.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[^a-z0-9]+/, '').replace(/-+$/, '').slice(0, 60)
  if (base === '' || isReservedKey(base)) base = 'content'
  let name = base
  for (let n = 2; taken.has(name) || !COLLECTION_NAME.test(name); n++) name = `${base}-${n}`
  taken.add(name)
  return name
}
