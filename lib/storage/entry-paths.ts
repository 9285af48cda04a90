/**
 * Where a collection's entries live on disk and how ids map to files and back (CONTRACT section
 * 11): flat (`<folder>/<id>.<ext>`), nested (`<folder>/<a>/<b>.<ext>`, id `a/b`), page bundles
 * (`<folder>/<id>/<indexFile>.<ext>`, id = the folder's path) and lists of single files. One id
 * is one file: two files that map to one id make that id an unreadable entry until one is renamed.
 */
import { fileNameProblem } from './bounded-file-name.js'
import { readdir, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { FORMAT_EXTENSIONS, type EntryFormat } from '../content/formats.js'
import { realpathSync } from 'node:fs'
import { entryIdProblem } from './names.js'
import { isInside } from './safe-path.js'
import { isReservedKey } from '../content/reserved-keys.js'

/** The parts of a collection that decide where its files are. */
export interface EntryLayout {
  /** Absolute folder of the collection (the repository root for a `files` collection). */
  dir: string
  format: EntryFormat
  nested: boolean
  indexFile: 'index' | '_index' | null
  /** For a `files` collection: id -> absolute file; null otherwise. */
  files: ReadonlyMap<string, string> | null
  /**
   * Only these folders below `dir` hold entries (`/`-separated; a multilingual collection's locale
   * folders when none of its locales sits at the root); null or absent: all of `dir`.
   */
  roots?: readonly string[] | null
}

/** What a scan found: every entry file by id, and ids that are listed unreadable (and why). */
export interface LayoutScan {
  found: Map<string, string>
  problems: Map<string, string>
  /**
   * Ids whose file is not known to be the id's default one (`defaultFileOf`); every other id's
   * file is. Told from the listed name, so a restart need not compare each path with the default.
   */
  others: Set<string>
}

/** Folders never scanned: hidden ones (`.git`, `.cms`) are skipped by name, these too. */
const SKIPPED_DIRS = new Set(['node_modules'])
const MARKDOWN_FAMILY: EntryFormat[] = ['md', 'mdx']
/** How many folders a scan reads at once. */
const SCAN_CONCURRENCY = 8

/**
 * The file extensions a collection reads: Markdown collections read `.md`, `.markdown` and
 * `.mdx` alike (an Astro blog mixes them), other formats their own.
 * @param format the collection's format
 * @returns extensions with their dot, the format's own first
 */
export function extensionsOf (format: EntryFormat): string[] {
  if (!MARKDOWN_FAMILY.includes(format)) return FORMAT_EXTENSIONS[format]
  const own = FORMAT_EXTENSIONS[format]
  return [...own, ...MARKDOWN_FAMILY.flatMap(f => FORMAT_EXTENSIONS[f]).filter(e => !own.includes(e))]
}

/** `extensionsOf` of every format, computed once: `idOfPath` runs for every file of a scan. */
const EXTENSIONS: ReadonlyMap<EntryFormat, readonly string[]> = new Map((Object.keys(FORMAT_EXTENSIONS) as EntryFormat[]).map(f => [f, extensionsOf(f)]))

/**
 * The format a file is read with: the one its extension names.
 * @param file a file name or path
 * @param fallback the collection's format (for an extension of no format)
 * @returns the format
 */
export function formatOfFile (file: string, fallback: EntryFormat): EntryFormat {
  const ext = path.extname(file).toLowerCase()
  for (const [format, exts] of Object.entries(FORMAT_EXTENSIONS) as Array<[EntryFormat, string[]]>) {
    if (exts.includes(ext)) return format
  }
  return fallback
}

/**
 * Whether a format is Markdown (frontmatter plus body).
 * @param format an entry format
 * @returns true for md and mdx
 */
export function isMarkdownLike (format: EntryFormat): boolean {
  return MARKDOWN_FAMILY.includes(format)
}

/**
 * The id a file has, from its path below the collection folder.
 * @param layout the collection's layout
 * @param rel the path below `layout.dir`, `/`-separated (any platform separator is converted)
 * @returns the id (NFC), or null when the file is not an entry file of this collection
 */
export function idOfPath (layout: EntryLayout, rel: string): string | null {
  const posix = path.sep === '/' ? rel : rel.split(path.sep).join('/')
  if (layout.files !== null) {
    for (const [id, file] of layout.files) if (path.relative(layout.dir, file).split(path.sep).join('/') === posix) return id
    return null
  }
  if (!inRoots(layout, posix)) return null
  // A name at the top of the folder (every file of a flat collection): no split, no join.
  if (!posix.includes('/')) return idOfTopName(layout, posix)
  const segments = posix.split('/')
  if (segments.some(s => s === '' || s.startsWith('.') || SKIPPED_DIRS.has(s))) return null
  if (segments.length > 1 && !layout.nested && layout.indexFile === null) return null
  const base = segments[segments.length - 1]!
  const ext = extensionOf(base, EXTENSIONS.get(layout.format) ?? extensionsOf(layout.format))
  if (ext === null) return null
  const stem = base.slice(0, -ext.length)
  if (stem === '') return null
  if (layout.indexFile !== null && stem === layout.indexFile && segments.length > 1) {
    return segments.slice(0, -1).join('/').normalize('NFC')
  }
  return [...segments.slice(0, -1), stem].join('/').normalize('NFC')
}

/** Whether a path below the folder is inside one of the layout's roots (no roots: anywhere). */
function inRoots (layout: EntryLayout, rel: string): boolean {
  const roots = layout.roots
  if (roots === null || roots === undefined) return true
  return roots.some(root => root === '' || rel.startsWith(root + '/'))
}

/**
 * A plain id: ASCII letters, digits, `_` and `-`, starting with a letter or digit, at most 128
 * characters (names.ts's ENTRY_ID). Its NFC form is itself, and `entryIdProblem` finds nothing in
 * it unless it is a reserved name: a scan skips both for such ids.
 */
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/

/** `idOfPath` of a file directly in a (not `files`) collection's folder: its name's stem. */
function idOfTopName (layout: EntryLayout, name: string): string | null {
  if (name === '' || name.startsWith('.') || SKIPPED_DIRS.has(name)) return null
  const exts = EXTENSIONS.get(layout.format) ?? extensionsOf(layout.format)
  let stem: string | null = null
  // The extension as written (the common case, no lower-cased copy); no extension of a format is
  // the end of another's, so the first match is the one `extensionOf` finds.
  for (const ext of exts) if (name.endsWith(ext)) { stem = name.slice(0, -ext.length); break }
  if (stem === null) {
    const ext = extensionOf(name, exts)
    if (ext === null) return null
    stem = name.slice(0, -ext.length)
  }
  if (stem === '') return null
  return PLAIN_ID.test(stem) ? stem : stem.normalize('NFC')
}

/**
 * `entryIdProblem`, without its work for a plain id (the same answer: none).
 * @param id an id a scan derived
 * @returns the reason it is not a valid id, or null
 */
function scannedIdProblem (id: string): string | null {
  return PLAIN_ID.test(id) && !isReservedKey(id) ? null : entryIdProblem(id)
}

/**
 * The files an id may have on disk, in the order a lookup tries them.
 * @param layout the collection's layout
 * @param id a valid id
 * @returns absolute paths
 */
export function candidateFiles (layout: EntryLayout, id: string): string[] {
  if (layout.files !== null) {
    const file = layout.files.get(id)
    return file === undefined ? [] : [file]
  }
  const exts = extensionsOf(layout.format)
  const plain = exts.map(ext => path.join(layout.dir, id + ext))
  if (layout.indexFile === null || id === layout.indexFile) return plain
  return [...exts.map(ext => path.join(layout.dir, id, layout.indexFile + ext)), ...plain]
}

/**
 * The file a new entry is written to.
 * @param layout the collection's layout
 * @param id a valid id that fits the layout
 * @returns absolute path, or null when the layout has no place for it (an id not in `files`)
 */
export function newFileOf (layout: EntryLayout, id: string): string | null {
  if (layout.files !== null) return layout.files.get(id) ?? null
  const ext = FORMAT_EXTENSIONS[layout.format][0]!
  if (isBundleId(layout, id)) return path.join(layout.dir, id, layout.indexFile + ext)
  return path.join(layout.dir, id + ext)
}

/**
 * `newFileOf` for the index's rows (a row derives its file from its id): the same path
 * for a valid id, by concatenation (no normalization: it runs for every row a restart takes). Any
 * file that differs from it is recorded in its row, so an id it would mis-join only costs a string.
 * @param layout the collection's layout
 * @param id an entry id
 * @returns absolute path, or null when the layout has no place for it
 */
export function defaultFileOf (layout: EntryLayout, id: string): string | null {
  if (layout.files !== null) return layout.files.get(id) ?? null
  const ext = FORMAT_EXTENSIONS[layout.format][0]!
  if (isBundleId(layout, id)) return `${layout.dir}${path.sep}${id}${path.sep}${layout.indexFile}${ext}`
  return `${layout.dir}${path.sep}${id}${ext}`
}

/**
 * Whether a new entry of this id is a page bundle's index file: in a bundle collection, every id
 * but one naming an index page itself (`docs/_index`, Hugo's section page, and `index`), whose
 * file is `<id>.<ext>` (a bundle folder named `_index` would be a page Hugo never renders).
 */
function isBundleId (layout: EntryLayout, id: string): layout is EntryLayout & { indexFile: 'index' | '_index' } {
  if (layout.indexFile === null || id === layout.indexFile) return false
  const last = id.slice(id.lastIndexOf('/') + 1)
  return last !== 'index' && last !== '_index'
}

/**
 * Whether a file is `defaultFileOf(layout, id)`, without building that path.
 * @param layout the collection's layout
 * @param id an entry id
 * @param file absolute path
 * @returns true when equal
 */
export function isDefaultFile (layout: EntryLayout, id: string, file: string): boolean {
  if (layout.files !== null || isBundleId(layout, id)) return defaultFileOf(layout, id) === file
  const ext = FORMAT_EXTENSIONS[layout.format][0]!
  const dir = layout.dir
  return file.length === dir.length + 1 + id.length + ext.length && file.startsWith(dir) && file[dir.length] === path.sep &&
    file.startsWith(id, dir.length + 1) && file.endsWith(ext)
}

/**
 * Why a valid id cannot be an entry of this collection, or null when it can.
 * @param layout the collection's layout
 * @param id a valid id (grammar already checked)
 * @returns a reason, or null
 */
export function idLayoutProblem (layout: EntryLayout, id: string): string | null {
  if (id.includes('/') && !layout.nested && layout.indexFile === null) {
    return 'holds a / but the collection is neither nested nor made of page bundles'
  }
  if (layout.files !== null && !layout.files.has(id)) return 'is not one of the collection\'s files'
  if (!inRoots(layout, id)) return `is in none of the collection's locale folders (${(layout.roots ?? []).join(', ')})`
  const file = newFileOf(layout, id)
  return file === null ? null : fileNameProblem(file)
}

/**
 * The real location of a path that may not exist yet: its nearest existing ancestor's real path
 * (symbolic links resolved) joined with the rest.
 * @param target absolute path
 * @returns an absolute path, or null when it cannot be resolved (a loop, a file on the way)
 */
export function realPathOf (target: string): string | null {
  let probe = target
  for (;;) {
    try {
      // An existing path (the common case, a few times per save) without path.relative's and
      // path.join's string copies: realpath's answer is already absolute and normalized.
      if (probe === target) return realpathSync.native(target)
      return path.join(realpathSync.native(probe), path.relative(probe, target))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') return null
      const parent = path.dirname(probe)
      if (parent === probe) return null
      probe = parent
    }
  }
}

/**
 * Whether a path (existing or not) resolves inside a real directory.
 * @param realDir a real (resolved) directory
 * @param target absolute path
 * @returns true when contained
 */
export function resolvesInside (realDir: string, target: string): boolean {
  const real = realPathOf(target)
  return real !== null && isInside(realDir, real)
}

/**
 * Lists every entry file of a collection: the folder (and its subfolders when nested or made of
 * page bundles), skipping hidden names and `node_modules`, never following a linked folder.
 * A file whose name is not a valid id, and an id two files map to, are listed as problems.
 * @param layout the collection's layout
 * @returns the files by id and the problems by id
 */
export async function scanLayout (layout: EntryLayout): Promise<LayoutScan> {
  const found = new Map<string, string>()
  const problems = new Map<string, string>()
  const others = new Set<string>()
  const add = (id: string, file: string, isDefault: boolean): void => {
    if (!isDefault) others.add(id)
    const other = found.get(id)
    if (other !== undefined) {
      others.add(id)
      const names = [other, file].map(f => path.relative(layout.dir, f).split(path.sep).join('/')).sort()
      problems.set(id, `Two files map to this id (${names.join(', ')}): rename or remove one`)
      if (file < other) found.set(id, file)
      return
    }
    found.set(id, file)
    const problem = scannedIdProblem(id)
    if (problem !== null) problems.set(id, `The file name is not a valid entry id (it ${problem}): rename the file`)
  }
  if (layout.files !== null) {
    for (const [id, file] of layout.files) { found.set(id, file); others.add(id) }
    return { found, problems, others }
  }
  const deep = layout.nested || layout.indexFile !== null
  const ext = FORMAT_EXTENSIONS[layout.format][0]!
  // A scanned path is `defaultFileOf`'s string only when the folder is written normalized.
  const exact = path.normalize(layout.dir) === layout.dir
  const bundleFile = layout.indexFile === null ? null : layout.indexFile + ext
  // A bounded number of folders is read at once: a walk of 10,000 bundle folders all in flight
  // would hold every listing alive together (heap the server keeps afterwards).
  const top = path.normalize(layout.dir)
  const pending: Array<[string, string]> = layout.roots === null || layout.roots === undefined || layout.roots.includes('')
    ? [[top, '']]
    : layout.roots.map(root => [path.join(top, ...root.split('/')), root])
  const walker = async (): Promise<void> => {
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [dir, rel] = next
      let dirents
      try {
        dirents = await readdir(dir, { withFileTypes: true })
      } catch {
        continue
      }
      for (const d of dirents) {
        if (d.name.startsWith('.')) continue
        if (d.isDirectory()) {
          if (deep && !SKIPPED_DIRS.has(d.name)) pending.push([childPath(dir, d.name), rel === '' ? d.name : `${rel}/${d.name}`])
          continue
        }
        // Files and links to files (a link is checked when read); a linked folder is never entered.
        if (!d.isFile() && !d.isSymbolicLink()) continue
        const id = rel === '' ? idOfTopName(layout, d.name) : idOfPath(layout, `${rel}/${d.name}`)
        if (id === null) continue
        // `<folder>/<id><ext>`, or a bundle's `<folder>/<id>/<index><ext>`, as `defaultFileOf` makes
        // them (a deeper file of a nested collection is left to the full check).
        const isDefault = exact && (rel === ''
          ? (layout.indexFile === null || id === layout.indexFile) && d.name.length === id.length + ext.length && d.name.startsWith(id) && d.name.endsWith(ext)
          : d.name === bundleFile && id === rel && id !== layout.indexFile)
        add(id, childPath(dir, d.name), isDefault)
      }
    }
  }
  // Folders found by one walker are taken by any: keep walking until none is left.
  while (pending.length > 0) await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, walker))
  return { found, problems, others }
}

/**
 * `path.join(dir, name)` for a normalized folder and a name `readdir` gave (no separator, never `.`
 * or `..`): the same string without normalizing it again (a third of a 100,000-file scan).
 */
function childPath (dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name
}

function extensionOf (base: string, exts: readonly string[]): string | null {
  const lower = base.toLowerCase()
  for (const ext of exts) if (lower.endsWith(ext)) return base.slice(base.length - ext.length)
  return null
}

/**
 * After an entry file was removed: removes its folder and the folders above it while they are
 * empty, up to (not including) the collection folder. A page bundle's other files (images)
 * belong to the entry but are never removed: a folder that still holds anything stays.
 * @param collectionDir the collection folder
 * @param dir the removed file's folder
 * @returns resolves when done (a folder that is not empty is left as it is)
 */
export async function removeEmptyFolders (collectionDir: string, dir: string): Promise<void> {
  let current = dir
  while (current !== collectionDir && isInside(collectionDir, current)) {
    try {
      await rmdir(current)
    } catch {
      return
    }
    current = path.dirname(current)
  }
}
