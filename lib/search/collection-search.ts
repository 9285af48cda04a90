/**
 * The full-text search of one collection: builds its index in the background (after the
 * collection index is ready, in a worker for a big collection), keeps it current from the
 * collection index's changes (service writes and deletions, outside changes it notices through
 * the watcher or a sync), and makes a search before the index is built wait for it (never an
 * answer from part of the index). Changes seen while a build runs are replayed onto it.
 */
import type { EntryData } from '../content/formats.js'
import type { Collection } from '../storage/collection-registry.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { entryTerms, type EntryTerms } from './entry-terms.js'
import { FullTextIndex } from './full-text-index.js'
import { MAX_DOCS } from './ranking.js'
import { readSegment } from './segment-reader.js'
import { SearchSegment } from './search-segment.js'

/** The overlay of changed entries is folded into a new segment (a background rebuild) beyond this many plus a tenth of the entries. */
const OVERLAY_REBUILD = 2000

const searches = new WeakMap<CollectionIndex, CollectionSearch>()

/**
 * The search of a collection index.
 * @param index a collection index
 * @returns its search, or undefined when none was attached
 */
export function searchOf (index: CollectionIndex): CollectionSearch | undefined {
  return searches.get(index)
}

/** Full-text search over one collection. */
export class CollectionSearch {
  readonly #collection: Collection
  readonly #repoRealDir: string
  #index: CollectionIndex | null = null
  #built: FullTextIndex | null = null
  #building: Promise<FullTextIndex> | null = null
  /** Changes seen while a build runs (latest per id; null: removed). */
  #pending: Map<string, EntryTerms | null> | null = null
  readonly #overlayRebuild: number
  #builds = 0

  /**
   * @param collection the collection
   * @param repoRealDir the repository's real path
   * @param opts `overlayRebuild`: changed entries (beyond a tenth of all) that start a rebuild
   */
  constructor (collection: Collection, repoRealDir: string, opts: { overlayRebuild?: number } = {}) {
    this.#collection = collection
    this.#repoRealDir = repoRealDir
    this.#overlayRebuild = opts.overlayRebuild ?? OVERLAY_REBUILD
  }

  /**
   * Ties this search to its collection index (which calls `onEntryChange`).
   * @param index the collection's index
   */
  attach (index: CollectionIndex): void {
    this.#index = index
    searches.set(index, this)
  }

  /**
   * Takes an entry change from the collection index: its data now (undefined when the file
   * cannot be read: the id alone stays searchable), or null when it was removed. Before any build
   * started there is nothing to update: the build reads the files afterwards.
   * @param id entry id
   * @param data its data, undefined or null
   */
  readonly onEntryChange = (id: string, data: EntryData | undefined | null): void => {
    if (this.#built === null && this.#pending === null) return
    const terms = data === null ? null : entryTerms(id, data, this.#collection.titleField)
    this.#pending?.set(id, terms)
    const built = this.#built
    if (built === null) return
    if (terms === null) built.remove(id)
    else built.set(id, terms)
    if (this.#building === null && built.overlaySize > this.#overlayRebuild + built.size / 10) this.#startBuild()
  }

  /**
   * Starts building the index in the background, unless it is built or being built.
   */
  start (): void {
    if (this.#built === null) this.#startBuild()
  }

  /** Builds finished (the first one and each rebuild). */
  get builds (): number {
    return this.#builds
  }

  /** Starts a build (the first, or a rebuild that folds the changed entries in). */
  #startBuild (): void {
    if (this.#building !== null) return
    this.#pending = new Map()
    const building = this.#build()
    this.#building = building
    // A failed build is tried again by the next search (which then reports its error).
    building.catch(() => {}).finally(() => {
      if (this.#building === building) { this.#building = null; this.#pending = null }
    })
  }

  /**
   * The index, once built (starting the build if none ran).
   * @returns the built index
   */
  async ready (): Promise<FullTextIndex> {
    if (this.#built !== null) return this.#built
    if (this.#building === null) this.#startBuild()
    return await (this.#building as Promise<FullTextIndex>)
  }

  /** Bytes the built index's arrays hold (0 before it is built). */
  get bytes (): number {
    return this.#built?.bytes ?? 0
  }

  async #build (): Promise<FullTextIndex> {
    const index = this.#index
    if (index === null) throw new Error('search not attached to a collection index')
    const rows = await index.all()
    const files: Array<[string, string]> = rows.map(r => [r.id, r.file])
    const built = await readSegment({ repoRealDir: this.#repoRealDir, files, format: this.#collection.format, titleField: this.#collection.titleField })
    const ids = Array.from(built.order, i => (files[i] as [string, string])[0])
    const fresh = new FullTextIndex(new SearchSegment(built.segment), ids)
    // The changes seen meanwhile, then the swap, in one synchronous step: none falls between.
    for (const [id, terms] of this.#pending ?? []) {
      if (terms === null) fresh.remove(id)
      else fresh.set(id, terms)
    }
    if (fresh.size + fresh.overlaySize >= MAX_DOCS) throw new Error('too many entries for the full-text index')
    this.#built = fresh
    this.#pending = null
    this.#builds++
    return fresh
  }
}
