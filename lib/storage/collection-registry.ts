/**
 * Which collections exist and how each is defined: explicit ones from the config, dynamic ones from
 * `.cms/collections/<name>.json`, and inferred ones (any other folder of content under `contentDir`).
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Config, CollectionDefinition, I18nDefinition } from '../config.js'
import type { LocaleLayout } from '../content/i18n-layout.js'
import type { EntryFormat } from '../content/formats.js'
import { FORMAT_EXTENSIONS } from '../content/formats.js'
import type { JsonSchema } from '../content/schema-tools.js'
import type { CollectionMetadata } from '../content/command-schema-table.js'
import { COLLECTION_NAME, collectionLabel } from './names.js'
import { BadRequestError, CollectionRefusedError, LimitExceededError } from '../errors.js'
import { collectionCountOverLimit, MAX_SCHEMA_CHARS, schemaOverLimit } from '../content/data-depth.js'
import { SchemaCompileError } from '../content/thread-schema-compiler.js'
import { formatOfFile } from './entry-paths.js'
import { realpathSync } from 'node:fs'
import { isInside, relativeSlashPath, resolvesIntoRepo } from './safe-path.js'

export type SchemaSource = 'explicit' | 'dynamic' | 'inferred'

/** A collection with every default resolved. */
export interface Collection {
  name: string
  source: SchemaSource
  format: EntryFormat
  /** The declared schema; null for inferred collections (inferred from entries on demand). */
  schema: JsonSchema | null
  metadata: Required<CollectionMetadata>
  titleField: string | null
  orderField: string
  layoutField: string
  /** Columns of the Studio's list (config `listFields`); null: title and date when present. */
  listFields: string[] | null
  /** Absolute directory of its entry files (the repository root for a `files` collection). */
  dir: string
  /** `dir` relative to the repository root, `/`-separated (`.` for the root). */
  folder: string
  /** Files in subfolders are entries too. */
  nested: boolean
  /** Page bundles: a folder holding `<indexFile>.<ext>` is one entry. */
  indexFile: 'index' | '_index' | null
  /** The frontmatter kind of Markdown files the service creates. */
  frontmatter: 'yaml' | 'toml' | 'json'
  /** A `files` collection: id -> absolute file; null for a folder collection. */
  files: ReadonlyMap<string, string> | null
  /** Where this collection's uploads go and their URL prefix; null: the top-level keys. */
  uploads: { dir: string, url: string } | null
  /** The collection's translations (config `i18n`); null: one language. */
  i18n: LocaleLayout | null
  createdAt?: number
  updatedAt?: number
}

/** What `.cms/collections/<name>.json` holds. */
export interface DynamicCollectionFile {
  schema: JsonSchema
  format?: EntryFormat
  metadata?: CollectionMetadata
  created_at: number
  updated_at: number
}

/** Where dynamic collection definitions live, relative to the repository. */
export const DYNAMIC_DIR = '.cms/collections'

/** Told of a definition that arrived through git over a bound or invalid: the collection is refused. */
export type OnCollectionRefused = (name: string, reason: string) => void

/**
 * The error of a collection whose schema (arrived through git) does not compile: 422
 * `limit_exceeded` when too costly, else `collection_refused`.
 * @param name the collection
 * @param err what compiling threw
 * @returns the error to throw (`err` itself when it is not a compile failure)
 */
export function schemaRefusal (name: string, err: unknown): unknown {
  return err instanceof SchemaCompileError ? refusalError(name, { reason: `its schema does not compile: ${err.message}`, invalid: !err.tooCostly }) : err
}

/** The 422 of a refused collection: `collection_refused` when invalid, else `limit_exceeded`. */
function refusalError (name: string, { reason, invalid }: Omit<Refusal, 'format'>): Error {
  const message = `Collection ${name} is not read: ${reason} (${DYNAMIC_DIR}/${name}.json)`
  return invalid ? new CollectionRefusedError(message, { collection: name }) : new LimitExceededError(message, { collection: name })
}

/** Resolves collections; one instance per service. */
export class CollectionRegistry {
  readonly #repoDir: string
  readonly #config: Config
  /** Absolute path of the content directory. */
  readonly contentRoot: string
  #dynamic = new Map<string, Collection>()
  /** Inferred collections seen so far (their format guessed once). */
  #inferred = new Map<string, Collection>()
  /** The collections of the config, resolved once. */
  readonly #explicit = new Map<string, Collection>()
  /** Dynamic definitions over a bound or invalid: name -> why. */
  readonly #refused = new Map<string, Refusal>()
  readonly #onRefused: OnCollectionRefused
  /** Definitions to read (again) at the next look-up: all at first, then those git or the API rewrote. */
  readonly #changed = new Set<string>()
  #listed: Promise<void> | null = null
  /** The reading of changed definitions under way (never rejects): one at a time, and a look-up waits for it. */
  #reading: Promise<void> = Promise.resolve()

  constructor (repoDir: string, config: Config, onRefused: OnCollectionRefused = () => {}) {
    this.#repoDir = repoDir
    this.#config = config
    this.contentRoot = path.join(repoDir, config.contentDir)
    this.#onRefused = onRefused
    for (const [name, def] of Object.entries(config.collections)) this.#explicit.set(name, this.#resolve(name, 'explicit', def, def.schema ?? null))
  }

  /**
   * Reads the dynamic collection definitions (at the first call, then those changed since); one
   * over create_collection's bounds (or past the count, in name order) or shape is refused.
   * @returns resolves when loaded
   */
  async load (): Promise<void> {
    this.#listed ??= readdir(path.join(this.#repoDir, DYNAMIC_DIR)).catch(() => [] as string[])
      .then(files => { this.definitionsChanged(files.sort().map(file => `${DYNAMIC_DIR}/${file}`)) })
    await this.#listed
    if (this.#changed.size > 0) {
      const reading = this.#reading.then(async () => {
        const names = [...this.#changed]
        this.#changed.clear()
        for (const name of names) {
          const read = await readDefinition(path.join(this.#repoDir, DYNAMIC_DIR, `${name}.json`), this.#dynamic.size - (this.#dynamic.has(name) ? 1 : 0))
          this.#dynamic.delete(name)
          this.#refused.delete(name)
          if (read === null) continue
          if ('reason' in read) {
            this.#refused.set(name, read)
            this.#onRefused(name, read.reason)
            continue
          }
          const c = this.#resolve(name, 'dynamic', { ...read.metadata, format: read.format }, read.schema)
          c.createdAt = read.created_at
          c.updatedAt = read.updated_at
          this.#dynamic.set(name, c)
        }
      })
      this.#reading = reading.catch(() => {})
      await reading
    }
    await this.#reading
  }

  /**
   * Takes note of definition files git or the API rewrote: each is read again at the next look-up.
   * @param paths repository-relative paths (forward slashes)
   * @returns the names of the collections whose definitions changed
   */
  definitionsChanged (paths: readonly string[]): string[] {
    const names: string[] = []
    for (const p of paths) {
      const name = p.startsWith(`${DYNAMIC_DIR}/`) && p.endsWith('.json') ? p.slice(DYNAMIC_DIR.length + 1, -'.json'.length) : ''
      if (!COLLECTION_NAME.test(name) || this.#explicit.has(name)) continue
      this.#changed.add(name)
      names.push(name)
    }
    return names
  }

  /**
   * A refused dynamic collection's entry file extensions (for delete_collection; its folder is `contentRoot/name`).
   * @param name a valid collection name
   * @returns null when the collection is not refused
   */
  async refused (name: string): Promise<string[] | null> {
    await this.load()
    const refusal = this.#refused.get(name)
    if (refusal === undefined) return null
    return refusal.format === null ? Object.values(FORMAT_EXTENSIONS).flat() : FORMAT_EXTENSIONS[refusal.format]
  }

  /**
   * Finds a collection by (already validated) name.
   * @param name collection name
   * @returns the collection, or null when there is none
   */
  async get (name: string): Promise<Collection | null> {
    await this.load()
    const explicit = this.#explicit.get(name)
    if (explicit !== undefined) return explicit
    const dynamic = this.#dynamic.get(name)
    if (dynamic !== undefined) return dynamic
    const refused = this.#refused.get(name)
    if (refused !== undefined) throw refusalError(name, refused)
    const dir = path.join(this.contentRoot, name)
    let st = await lstat(dir).catch(() => null)
    if (st?.isSymbolicLink() === true) {
      if (!resolvesIntoRepo(realpathSync.native(this.#repoDir), dir)) throw new BadRequestError('The collection folder is a link that leaves the repository', { collection: name })
      st = await stat(dir).catch(() => null)
    }
    if (st === null || !st.isDirectory() || this.#claimed(dir)) {
      this.#inferred.delete(name)
      return null
    }
    let inferred = this.#inferred.get(name)
    if (inferred === undefined) {
      // Only a folder that holds content is a collection (not `assets`, not a code folder).
      const format = await guessFormat(dir)
      if (format === null) return null
      inferred = this.#resolve(name, 'inferred', { format }, null)
      this.#inferred.set(name, inferred)
    }
    return inferred
  }

  /**
   * Every folder a collection reads, without those inside another (what the watcher subscribes to).
   * @returns absolute directories
   */
  watchRoots (): string[] {
    const dirs = new Set<string>([this.contentRoot])
    for (const c of this.#explicit.values()) {
      if (c.files !== null) for (const file of c.files.values()) dirs.add(path.dirname(file))
      else dirs.add(c.dir)
    }
    const sorted = [...dirs].sort((a, b) => a.length - b.length)
    return sorted.filter((d, i) => !sorted.slice(0, i).some(outer => isInside(outer, d)))
  }

  /** Whether a folder under contentDir already belongs to a collection the site defined. */
  #claimed (dir: string): boolean {
    for (const c of this.#explicit.values()) {
      if (c.files !== null) continue
      if (c.dir === dir) return true
      if ((c.nested || c.indexFile !== null) && isInside(c.dir, dir)) return true
    }
    return false
  }

  /**
   * Lists every collection, sorted by `order` then name.
   * @returns the collections
   */
  async list (): Promise<Collection[]> {
    await this.load()
    const names = new Set<string>([...this.#explicit.keys(), ...this.#dynamic.keys()])
    try {
      for (const dirent of await readdir(this.contentRoot, { withFileTypes: true })) {
        // A linked folder is never listed as an inferred collection.
        if (dirent.isDirectory() && COLLECTION_NAME.test(dirent.name)) names.add(dirent.name)
      }
    } catch {}
    const all: Collection[] = []
    for (const name of names) {
      let c: Collection | null = null
      try { c = await this.get(name) } catch {}
      if (c !== null) all.push(c)
    }
    const rank = (c: Collection): number => c.source === 'inferred' ? 1 : 0
    return all.sort((a, b) => rank(a) - rank(b) || a.metadata.order - b.metadata.order || a.name.localeCompare(b.name))
  }

  /**
   * The dynamic collections only.
   * @returns their resolved definitions
   */
  async listDynamic (): Promise<Collection[]> {
    await this.load()
    return [...this.#dynamic.values()].sort((a, b) => a.metadata.order - b.metadata.order || a.name.localeCompare(b.name))
  }

  #resolve (name: string, source: SchemaSource, def: CollectionDefinition, schema: JsonSchema | null): Collection {
    const files = def.files === undefined ? null : new Map(def.files.map(f => [idOfFile(f), path.join(this.#repoDir, f)]))
    const folderDir = def.folder === undefined ? path.join(this.contentRoot, name) : path.join(this.#repoDir, def.folder)
    const dir = files === null ? folderDir : this.#repoDir
    const folder = relativeSlashPath(this.#repoDir, dir) || '.'
    const format = def.format ?? (def.files?.[0] !== undefined ? formatOfFile(def.files[0], 'json') : 'json')
    return {
      name,
      source,
      format,
      schema,
      metadata: {
        label: def.label ?? collectionLabel(name),
        description: def.description ?? '',
        icon: def.icon ?? '',
        // A files collection has a fixed set of entries.
        creatable: def.creatable ?? files === null,
        orderable: def.orderable ?? false,
        deletable: def.deletable ?? true,
        singletonId: def.singletonId ?? null,
        order: def.order ?? 0
      },
      titleField: def.titleField ?? null,
      orderField: def.orderField ?? 'order',
      layoutField: def.layoutField ?? 'sections',
      listFields: def.listFields ?? null,
      dir,
      folder,
      nested: def.nested ?? false,
      indexFile: def.indexFile ?? null,
      frontmatter: def.frontmatter ?? 'yaml',
      files,
      uploads: def.uploadsDir === undefined
        ? null
        : { dir: def.uploadsDir.replace(/\/+$/, ''), url: (def.uploadsUrl ?? this.#config.uploadsUrl).replace(/(.)\/+$/, '$1') },
      i18n: def.i18n === undefined ? null : resolveLocaleLayout(def.i18n, folder)
    }
  }
}

/** A collection's `i18n` with each locale's folder as an id prefix below the collection folder. */
function resolveLocaleLayout (def: I18nDefinition, collectionFolder: string): LocaleLayout {
  const layout = def.layout ?? 'folder'
  const prefixes = new Map<string, string>()
  let rootLocale = def.rootLocale ?? null
  if (layout === 'folder') {
    for (const locale of def.locales) prefixes.set(locale, locale === rootLocale ? '' : locale)
  } else if (layout === 'dirs') {
    for (const [locale, folder] of Object.entries(def.folders ?? {})) {
      const rel = path.posix.relative(collectionFolder === '.' ? '' : collectionFolder, folder.replace(/\/+$/, ''))
      prefixes.set(locale, rel)
      if (rel === '') rootLocale = locale
    }
  }
  return { locales: def.locales, layout, rootLocale, prefixes }
}

/** The format most of a folder's files have; null when it holds no file of a known format. */
async function guessFormat (dir: string): Promise<EntryFormat | null> {
  const counts = new Map<EntryFormat, number>()
  try {
    for (const file of await readdir(dir)) {
      const format = file.startsWith('.') ? null : formatOfFile(file, null)
      if (format !== null) counts.set(format, (counts.get(format) ?? 0) + 1)
    }
  } catch {}
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null
}

/** The id of a `files` entry: its file name without the extension. */
function idOfFile (file: string): string {
  const base = path.posix.basename(file)
  return base.slice(0, base.length - path.posix.extname(base).length).normalize('NFC')
}

/** Largest definition file read (the largest schema allowed, as create_collection writes it, stays well under it). */
const MAX_DEFINITION_FILE_BYTES = 16 * MAX_SCHEMA_CHARS

/** Why a definition is refused (see refusalError); `format`: the one it names, whose files delete_collection removes. */
interface Refusal { reason: string, invalid: boolean, format: EntryFormat | null }

/** Reads a definition file (it may come through git) held to create_collection's bounds and shape; `others`: other dynamic ones. */
async function readDefinition (file: string, others: number): Promise<Refusal | DynamicCollectionFile | null> {
  let text: string
  try {
    const { size } = await stat(file)
    if (size > MAX_DEFINITION_FILE_BYTES) return { reason: `its definition file is larger than ${MAX_DEFINITION_FILE_BYTES} bytes`, invalid: false, format: null }
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    return { reason: `its definition file cannot be read: ${(err as Error).message}`, invalid: true, format: null }
  }
  let parsed: unknown
  try { parsed = JSON.parse(text) } catch (err) {
    return { reason: `its definition file is not JSON: ${(err as Error).message}`, invalid: true, format: null }
  }
  const named = (parsed as { format?: unknown } | null)?.format ?? 'json'
  const format = typeof named === 'string' && Object.hasOwn(FORMAT_EXTENSIONS, named) ? named as EntryFormat : null
  // The shape first, then its size; the command validators (142 KB) load with the first definition file.
  const invalid = invalidDefinition(parsed, await import('../content/command-validators.js'))
  if (invalid !== null) return { reason: invalid, invalid: true, format }
  const over = schemaOverLimit((parsed as DynamicCollectionFile).schema)
  if (over !== null) return { reason: over.message, invalid: false, format }
  const full = collectionCountOverLimit(others)
  if (full !== null) return { reason: full, invalid: false, format }
  return parsed as DynamicCollectionFile
}

/** Why a parsed definition is not what create_collection writes (its schema and two times), or null. */
function invalidDefinition (parsed: unknown, { commandValidator, firstCommandError }: typeof import('../content/command-validators.js')): string | null {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'its definition is not a JSON object'
  const { schema, format, metadata, created_at: createdAt, updated_at: updatedAt } = parsed as Record<string, unknown>
  const validate = commandValidator('create_collection')
  if (!validate({ type: 'create_collection', collection: 'x', schema, ...(format !== undefined ? { format } : {}), ...(metadata !== undefined ? { metadata } : {}) })) {
    const { field, reason } = firstCommandError(validate)
    return `its definition's ${field} ${reason}`
  }
  for (const [key, value] of [['created_at', createdAt], ['updated_at', updatedAt]] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return `its definition's ${key} must be number`
  }
  return null
}
