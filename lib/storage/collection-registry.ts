/**
 * Which collections exist and how each is defined: explicit ones from the config, dynamic ones
 * from `.cms/collections/<name>.json` (created through the API), and inferred ones, which are any
 * other directory under `contentDir`.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Config, CollectionDefinition } from '../config.js'
import type { EntryFormat } from '../content/formats.js'
import { FORMAT_EXTENSIONS } from '../content/formats.js'
import type { JsonSchema } from '../content/schema-tools.js'
import { COLLECTION_NAME } from './names.js'

export type SchemaSource = 'explicit' | 'dynamic' | 'inferred'

/** The metadata fields the spec lists for a collection. */
export interface CollectionMetadata {
  label: string
  description: string
  icon: string
  creatable: boolean
  orderable: boolean
  deletable: boolean
  singletonId: string | null
  order: number
}

/** A collection with every default resolved. */
export interface Collection {
  name: string
  source: SchemaSource
  format: EntryFormat
  /** The declared schema; null for inferred collections (inferred from entries on demand). */
  schema: JsonSchema | null
  metadata: CollectionMetadata
  titleField: string | null
  orderField: string
  layoutField: string
  /** Absolute directory of its entry files. */
  dir: string
  createdAt?: number
  updatedAt?: number
}

/** What `.cms/collections/<name>.json` holds. */
export interface DynamicCollectionFile {
  schema: JsonSchema
  format?: EntryFormat
  metadata?: Partial<CollectionMetadata>
  created_at: number
  updated_at: number
}

/** Where dynamic collection definitions live, relative to the repository. */
export const DYNAMIC_DIR = '.cms/collections'

/** Resolves collections; one instance per service. */
export class CollectionRegistry {
  readonly #repoDir: string
  readonly #config: Config
  readonly #contentRoot: string
  #dynamic = new Map<string, Collection>()
  /** Inferred collections seen so far; their format is guessed once from the files present. */
  #inferred = new Map<string, Collection>()
  readonly #explicit = new Map<string, Collection>()
  #loaded = false

  constructor (repoDir: string, config: Config) {
    this.#repoDir = repoDir
    this.#config = config
    this.#contentRoot = path.join(repoDir, config.contentDir)
  }

  /** Absolute path of the content directory. */
  get contentRoot (): string { return this.#contentRoot }

  /**
   * Reads the dynamic collection definitions (once; later changes go through `setDynamic`).
   * @returns resolves when loaded
   */
  async load (): Promise<void> {
    if (this.#loaded) return
    const dir = path.join(this.#repoDir, DYNAMIC_DIR)
    let names: string[] = []
    try { names = await readdir(dir) } catch {}
    for (const file of names) {
      const name = file.replace(/\.json$/, '')
      if (!file.endsWith('.json') || !COLLECTION_NAME.test(name) || name in this.#config.collections) continue
      try {
        const parsed = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as DynamicCollectionFile
        this.#dynamic.set(name, this.#resolveDynamic(name, parsed))
      } catch {
        // An unreadable definition is skipped; the directory still shows as an inferred collection.
      }
    }
    this.#loaded = true
  }

  /**
   * Records a dynamic collection created or removed through the API.
   * @param name collection name
   * @param file its definition, or null when deleted
   */
  setDynamic (name: string, file: DynamicCollectionFile | null): void {
    if (file === null) this.#dynamic.delete(name)
    else this.#dynamic.set(name, this.#resolveDynamic(name, file))
  }

  /**
   * Finds a collection by (already validated) name.
   * @param name collection name
   * @returns the collection, or null when there is none
   */
  async get (name: string): Promise<Collection | null> {
    await this.load()
    const explicit = this.#config.collections[name]
    if (explicit !== undefined && Object.hasOwn(this.#config.collections, name)) {
      // One Collection object per explicit collection: the content store keys its index on it.
      let resolved = this.#explicit.get(name)
      if (resolved === undefined) {
        resolved = this.#resolve(name, 'explicit', explicit, explicit.schema ?? null)
        this.#explicit.set(name, resolved)
      }
      return resolved
    }
    const dynamic = this.#dynamic.get(name)
    if (dynamic !== undefined) return dynamic
    const dir = path.join(this.#contentRoot, name)
    try {
      const st = await stat(dir)
      if (!st.isDirectory()) return null
    } catch {
      this.#inferred.delete(name)
      return null
    }
    let inferred = this.#inferred.get(name)
    if (inferred === undefined) {
      inferred = this.#resolve(name, 'inferred', { format: await guessFormat(dir) }, null)
      this.#inferred.set(name, inferred)
    }
    return inferred
  }

  /**
   * Lists every collection, sorted by `order` then name.
   * @returns the collections
   */
  async list (): Promise<Collection[]> {
    await this.load()
    const names = new Set<string>([...Object.keys(this.#config.collections), ...this.#dynamic.keys()])
    try {
      for (const dirent of await readdir(this.#contentRoot, { withFileTypes: true })) {
        if (dirent.isDirectory() && COLLECTION_NAME.test(dirent.name)) names.add(dirent.name)
      }
    } catch {}
    const all: Collection[] = []
    for (const name of names) {
      const c = await this.get(name)
      if (c !== null) all.push(c)
    }
    // Collections the site defined come first; inferred ones (no config entry) after them.
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

  #resolveDynamic (name: string, file: DynamicCollectionFile): Collection {
    const c = this.#resolve(name, 'dynamic', { ...file.metadata, format: file.format }, file.schema)
    c.createdAt = file.created_at
    c.updatedAt = file.updated_at
    return c
  }

  #resolve (name: string, source: SchemaSource, def: CollectionDefinition, schema: JsonSchema | null): Collection {
    return {
      name,
      source,
      format: def.format ?? 'json',
      schema,
      metadata: {
        label: def.label ?? titleCase(name),
        description: def.description ?? '',
        icon: def.icon ?? '',
        creatable: def.creatable ?? true,
        orderable: def.orderable ?? false,
        deletable: def.deletable ?? true,
        singletonId: def.singletonId ?? null,
        order: def.order ?? 0
      },
      titleField: def.titleField ?? null,
      orderField: def.orderField ?? 'order',
      layoutField: def.layoutField ?? 'sections',
      dir: path.join(this.#contentRoot, name)
    }
  }
}

async function guessFormat (dir: string): Promise<EntryFormat> {
  const counts: Record<EntryFormat, number> = { json: 0, yaml: 0, md: 0, mdx: 0, toml: 0 }
  try {
    for (const file of await readdir(dir)) {
      const ext = path.extname(file)
      for (const [format, exts] of Object.entries(FORMAT_EXTENSIONS) as Array<[EntryFormat, string[]]>) {
        if (exts.includes(ext)) counts[format]++
      }
    }
  } catch {}
  return (Object.entries(counts) as Array<[EntryFormat, number]>).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'json'
}

function titleCase (name: string): string {
  return name.split(/[-_]/).filter(Boolean).map(w => w[0]!.toUpperCase() + w.slice(1)).join(' ')
}
