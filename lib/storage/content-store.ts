/**
 * The repository's content as the service sees it: the collection registry, one index per
 * collection (built on first use, persisted in one SQLite store), and one file watcher over the
 * content folders that marks changed entries for a re-check.
 */
import path from 'node:path'
import { realpath, stat } from 'node:fs/promises'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { FolderWatch } from './folder-watch.js'
import type { Config } from '../config.js'
import { NotFoundError, type ValidationIssue } from '../errors.js'
import { inferSchema, type JsonSchema, type Validator } from '../content/schema-tools.js'
import { ThreadSchemaCompiler } from '../content/thread-schema-compiler.js'
import { isMarkdownFormat, type EntryData } from '../content/formats.js'
import { CollectionRegistry, schemaRefusal, type Collection, type OnCollectionRefused } from './collection-registry.js'
import { CollectionIndex } from './collection-index.js'
import { IndexStore } from './index-store.js'
import { isInside } from './safe-path.js'

/** What sits beside a collection index (the full-text search): storage knows only this shape. */
export interface IndexCompanion {
  /** Starts background work once the index is built; never rejects. */
  start: () => Promise<void>
  /** Resolves once pending work is persisted and its files are let go. */
  flush: () => Promise<void>
}

export interface ContentStoreOptions {
  repoDir: string
  /** `.git/cms`, where process state lives. */
  stateDir: string
  config: Config
  onWatchError?: (err: Error) => void
  /** Makes the companion of each new collection index (the full-text search). */
  companion?: (index: CollectionIndex) => IndexCompanion
  /** Told of the seconds each new collection index took to build (metrics). */
  onIndexBuilt?: (seconds: number) => void
  /** Told of a collection definition over a bound (it arrived through git): it is not read. */
  onCollectionRefused?: OnCollectionRefused
}

const INFER_SAMPLE = 50

/** Owns the indexes of every collection of one repository. */
export class ContentStore {
  readonly registry: CollectionRegistry
  readonly schemas = new ThreadSchemaCompiler()
  readonly #opts: ContentStoreOptions
  /** Each collection's index, with its companion. */
  readonly #indexes = new Map<string, { index: CollectionIndex, companion: IndexCompanion | undefined }>()
  #store: IndexStore | null = null
  #repoRealDir: string | null = null
  readonly #unwatch = new AbortController()
  /** Told of every changed path (`watch`); of a watch root after events were lost. */
  readonly #listeners = new Set<(file: string) => void>()
  /** Resolves true once the file watcher sees changes, false when closed first; never rejects (errors go to `onWatchError`). */
  watching: Promise<boolean> = Promise.resolve(false)
  #closed = false

  constructor (opts: ContentStoreOptions) {
    this.#opts = opts
    this.registry = new CollectionRegistry(opts.repoDir, opts.config, opts.onCollectionRefused)
  }

  /** The repository's real path (symlinks resolved); set by `start`. */
  get repoRealDir (): string {
    if (this.#repoRealDir === null) throw new Error('ContentStore not started')
    return this.#repoRealDir
  }

  /**
   * Resolves paths, opens the index store and loads collection definitions; the watcher starts
   * in the background (see `watching`).
   * @returns resolves when ready to serve
   */
  async start (): Promise<void> {
    this.#repoRealDir = await realpath(this.#opts.repoDir)
    this.#store = new IndexStore(this.#opts.stateDir)
    await this.registry.load()
    this.watching = this.#watch().then(() => !this.#closed)
  }

  async #watch (): Promise<void> {
    for (const root of this.registry.watchRoots()) {
      if (this.#closed) return
      if (!await stat(root).then(st => st.isDirectory(), () => false)) continue
      await this.#watchTree(root, file => { this.#onFileEvent(file) }, () => { this.#onLost(root) })
    }
  }

  /**
   * Tells `onPath` of every change under a folder (a media root) through the content watch when it
   * covers the folder, else through a watch of its own; after events were lost, of the folder itself.
   * @param dir an existing folder
   * @param onPath told of each changed path under it
   * @returns resolves once changes are seen
   */
  async watch (dir: string, onPath: (file: string) => void): Promise<void> {
    this.#listeners.add(file => {
      if (isInside(dir, file)) onPath(file)
      else if (isInside(file, dir)) onPath(dir)
    })
    if (this.registry.watchRoots().some(root => isInside(root, dir))) return
    const tell = (file: string): void => { for (const listen of this.#listeners) listen(file) }
    await this.#watchTree(dir, tell, () => { tell(dir) })
  }

  async #watchTree (root: string, onPath: (file: string) => void, onLost: () => void): Promise<void> {
    await new FolderWatch(root, { onPath, onLost, onError: err => this.#opts.onWatchError?.(err), signal: this.#unwatch.signal }).start()
  }

  /**
   * Stops the watcher and closes the index store.
   * @returns resolves when stopped
   */
  async close (): Promise<void> {
    await Promise.all([...this.#indexes.values()].map(async ({ companion }) => { await companion?.flush() }))
    this.#closed = true
    await this.watching
    await Promise.all([...this.#indexes.values()].map(async ({ index }) => await index.caughtUp))
    this.#unwatch.abort()
    this.#store?.close()
    await this.schemas.close()
  }

  /**
   * Builds the index of every collection, one per turn of the event loop (the full-text indexes
   * wait for `startCompanions`).
   * @param stop checked between collections: true ends the warm-up early
   * @returns resolves when every index is built
   */
  async warm (stop: () => boolean = () => false): Promise<void> {
    for (const c of await this.registry.list()) {
      if (stop()) return
      // A collection that cannot be indexed is refused when asked for; the others still warm.
      try {
        await (await this.index(c.name)).ready()
      } catch {}
      await nextTurn()
    }
  }

  /**
   * Starts the companion of every index built so far, one per turn of the event loop.
   * @param stop checked between collections: true ends early
   * @returns resolves when every companion has been started (not built)
   */
  async startCompanions (stop: () => boolean = () => false): Promise<void> {
    for (const { companion } of [...this.#indexes.values()]) {
      if (stop() || this.#closed) return
      // One at a time: 100 databases opened together held the event loop 60-145 ms.
      await companion?.start()
      await nextTurn()
    }
  }

  /**
   * The index of a collection.
   * @param name a valid collection name
   * @returns its index; throws NotFoundError when there is no such collection
   */
  async index (name: string): Promise<CollectionIndex> {
    const collection = await this.registry.get(name)
    if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
    const existing = this.#indexes.get(name)?.index
    if (existing?.collection === collection) return existing
    if (this.#store === null) throw new Error('ContentStore not started')
    // A redefined collection: the old index's search lets its files go.
    if (existing !== undefined) this.dropIndex(name)
    const index = new CollectionIndex({
      collection,
      repoRealDir: this.repoRealDir,
      store: this.#store,
      validate: this.#validatorFor(collection),
      watching: this.watching
    })
    this.#indexes.set(name, { index, companion: this.#opts.companion?.(index) })
    const onBuilt = this.#opts.onIndexBuilt
    if (onBuilt !== undefined) {
      const started = performance.now()
      index.ready().then(() => { onBuilt((performance.now() - started) / 1000) }, () => {})
    }
    return index
  }

  /**
   * Forgets a collection's index (after it was deleted or redefined).
   * @param name collection name
   */
  dropIndex (name: string): void {
    const companion = this.#indexes.get(name)?.companion
    this.#indexes.delete(name)
    void companion?.flush().catch(() => {})
  }

  /**
   * The schema of a collection: declared, or inferred from a sample of its entries.
   * @param collection the collection
   * @returns a JSON Schema
   */
  async schemaOf (collection: Collection): Promise<JsonSchema> {
    if (collection.schema !== null) return collection.schema
    const index = await this.index(collection.name)
    const rows = (await index.all()).filter(e => e.fields !== undefined).slice(0, INFER_SAMPLE)
    const samples: EntryData[] = []
    for (const entry of await index.freshen(rows)) if (entry.data !== undefined) samples.push(entry.data)
    return inferSchema(samples, isMarkdownFormat(collection.format))
  }

  #validatorFor (collection: Collection): (data: EntryData) => ValidationIssue[] | Promise<ValidationIssue[]> {
    const schema = collection.schema
    if (schema === null) return () => []
    // Loaded from the schema thread on the first entry read; one that does not compile (it came through git) is a 422.
    let validate: Validator | null = null
    return (data) => validate !== null ? validate(data) : this.schemas.validator(schema).then(v => (validate = v)(data), (err: unknown) => { throw schemaRefusal(collection.name, err) })
  }

  /**
   * Marks files git rewrote (a fast-forward) as changed, without waiting for the watcher's event.
   * @param paths repository-relative paths (forward slashes)
   */
  markPathsChanged (paths: readonly string[]): void {
    for (const name of this.registry.definitionsChanged(paths)) this.dropIndex(name)
    for (const p of paths) this.#onFileEvent(path.join(this.#opts.repoDir, ...p.split('/')))
  }

  /** Events may have been lost: every index re-checks all its files on its next list. */
  #onLost (root: string): void {
    for (const { index } of this.#indexes.values()) index.markAllChanged()
    for (const listen of this.#listeners) listen(root)
  }

  #onFileEvent (file: string): void {
    for (const { index } of this.#indexes.values()) index.onFileEvent(file)
    for (const listen of this.#listeners) listen(file)
  }
}
