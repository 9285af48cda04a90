/**
 * How a collection's ids map to files and back (CONTRACT section 11): flat (`<folder>/<id>.<ext>`),
 * nested (id `a/b`), page bundles (`<folder>/<id>/<indexFile>.<ext>`) and lists of single files.
 */
import { rm, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { FORMAT_EXTENSIONS, type EntryFormat } from '../content/formats.js'
import { entryIdProblem } from './names.js'
import { TEMP_PREFIX } from './atomic-write.js'
import { isInside, relativeSlashPath } from './safe-path.js'
import { listFolder, listingPace } from './list-folder.js'

/** The parts of a collection that decide where its files are. */
export interface EntryLayout {
  /** Absolute folder of the collection (the repository root for a `files` collection). */
  dir: string
  format: EntryFormat
  nested: boolean
  indexFile: 'index' | '_index' | null
  /** For a `files` collection: id -> absolute file; null otherwise. */
  files: ReadonlyMap<string, string> | null
  /** Only these `/`-separated folders below `dir` hold entries (a multilingual collection's locales); null: all. */
  roots?: readonly string[] | null
}

/** Folders never scanned: hidden ones (`.git`, `.cms`) are skipped by name, these too. */
const SKIPPED_DIRS = new Set(['node_modules'])
const MARKDOWN_FAMILY: EntryFormat[] = ['md', 'mdx']
/** The longest entry file name in bytes: 255 less what its atomic write's temporary sibling `.cms-tmp-<12 hex>-` adds. */
const MAX_FILE_NAME_BYTES = 255 - Buffer.byteLength(TEMP_PREFIX) - 13

/**
 * The file extensions each format reads, with their dot, the format's own first: Markdown
 * collections read `.md`, `.markdown` and `.mdx` alike (an Astro blog mixes them).
 */
export const EXTENSIONS_READ = Object.freeze(Object.fromEntries((Object.keys(FORMAT_EXTENSIONS) as EntryFormat[]).map(format => {
  const own = FORMAT_EXTENSIONS[format]
  const read = MARKDOWN_FAMILY.includes(format) ? [...own, ...MARKDOWN_FAMILY.flatMap(f => FORMAT_EXTENSIONS[f]).filter(e => !own.includes(e))] : [...own]
  return [format, Object.freeze(read)]
})) as Record<EntryFormat, readonly string[]>)

/**
 * The format a file is read with: the one its extension names.
 * @param file a file name or path
 * @param fallback the collection's format, or null (for an extension of no format)
 * @returns the format
 */
export function formatOfFile<F extends EntryFormat | null> (file: string, fallback: F): EntryFormat | F {
  const ext = path.extname(file).toLowerCase()
  return (Object.keys(FORMAT_EXTENSIONS) as EntryFormat[]).find(format => FORMAT_EXTENSIONS[format].includes(ext)) ?? fallback
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
    for (const [id, file] of layout.files) if (relativeSlashPath(layout.dir, file) === posix) return id
    return null
  }
  if (!inRoots(layout, posix)) return null
  const segments = posix.split('/')
  if (segments.some(s => s === '' || s.startsWith('.') || SKIPPED_DIRS.has(s))) return null
  if (segments.length > 1 && !layout.nested && layout.indexFile === null) return null
  const base = segments[segments.length - 1]!
  const lower = base.toLowerCase()
  const ext = EXTENSIONS_READ[layout.format].find(e => lower.endsWith(e))
  if (ext === undefined) return null
  const stem = base.slice(0, -ext.length)
  if (stem === '') return null
  if (layout.indexFile !== null && stem === layout.indexFile && segments.length > 1) {
    return segments.slice(0, -1).join('/').normalize('NFC')
  }
  const id = segments.length === 1 ? stem : [...segments.slice(0, -1), stem].join('/')
  return id.normalize('NFC')
}

/** Whether a path below the folder is inside one of the layout's roots (no roots: anywhere). */
function inRoots (layout: EntryLayout, rel: string): boolean {
  const roots = layout.roots
  if (roots === null || roots === undefined) return true
  return roots.some(root => root === '' || rel.startsWith(root + '/'))
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
  const exts = EXTENSIONS_READ[layout.format]
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
  // In a bundle collection, every id but one ending `index` or `_index` is `<id>/<indexFile>`.
  if (layout.indexFile !== null && !/(^|\/)_?index$/.test(id)) {
    return path.join(layout.dir, id, layout.indexFile + ext)
  }
  return path.join(layout.dir, id + ext)
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
  const name = path.basename(newFileOf(layout, id) ?? '')
  if (Buffer.byteLength(name, 'utf8') > MAX_FILE_NAME_BYTES) {
    return `makes a file name longer than ${MAX_FILE_NAME_BYTES} bytes (${name.length} characters), more than the file system holds`
  }
  return null
}

/**
 * Lists every entry file of a collection: the folder (and its subfolders when nested or made of
 * page bundles), skipping hidden names and `node_modules`, never following a linked folder.
 * A file whose name is not a valid id, and an id two files map to, are listed as problems.
 * @param layout the collection's layout
 * @returns the files by id and the problems by id
 */
export async function scanLayout (layout: EntryLayout): Promise<{ found: Map<string, string>, problems: Map<string, string> }> {
  const found = new Map<string, string>()
  const problems = new Map<string, string>()
  if (layout.files !== null) return { found: new Map(layout.files), problems }
  const add = (id: string, file: string): void => {
    const other = found.get(id)
    if (other !== undefined) {
      const names = [other, file].map(f => relativeSlashPath(layout.dir, f)).sort()
      problems.set(id, `Two files map to this id (${names.join(', ')}): rename or remove one`)
      if (file < other) found.set(id, file)
      return
    }
    found.set(id, file)
    const problem = entryIdProblem(id)
    if (problem !== null) problems.set(id, `The file name is not a valid entry id (it ${problem}): rename the file`)
  }
  const deep = layout.nested || layout.indexFile !== null
  const top = path.normalize(layout.dir)
  const pending: Array<[string, string]> = layout.roots === null || layout.roots === undefined || layout.roots.includes('')
    ? [[top, '']]
    : layout.roots.map(root => [path.join(top, ...root.split('/')), root])
  const pace = listingPace()
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [dir, rel] = next
    // Joined by hand: path.join's normalizing was a tenth of a scan's CPU.
    const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
    try {
      await listFolder(dir, pace, d => {
        if (d.name.startsWith('.')) return
        const below = rel === '' ? d.name : `${rel}/${d.name}`
        if (d.isDirectory()) {
          if (deep && !SKIPPED_DIRS.has(d.name)) pending.push([prefix + d.name, below])
          return
        }
        // Files and links to files (a link is checked when read); a linked folder is never entered.
        if (!d.isFile() && !d.isSymbolicLink()) return
        const id = idOfPath(layout, below)
        if (id !== null) add(id, prefix + d.name)
      })
    } catch {}
  }
  return { found, problems }
}

/**
 * Removes an entry file, then its folder and those above it while they are empty, up to (not
 * including) the collection folder; a page bundle's other files (images) are never removed.
 * @param collectionDir the collection folder
 * @param file the entry file (absolute)
 * @returns resolves when done
 */
export async function removeEntryFile (collectionDir: string, file: string): Promise<void> {
  await rm(file, { force: true })
  let current = path.dirname(file)
  while (current !== collectionDir && isInside(collectionDir, current)) {
    try {
      await rmdir(current)
    } catch {
      return
    }
    current = path.dirname(current)
  }
}
