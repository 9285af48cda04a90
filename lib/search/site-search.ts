/**
 * The full-text search of a whole site: one CollectionSearch beside each collection index. The
 * content store makes each one through `companion` (it knows only the IndexCompanion shape), and
 * list commands find a collection's search here.
 */
import type { CollectionIndex } from '../storage/collection-index.js'
import type { IndexCompanion } from '../storage/content-store.js'
import { CollectionSearch } from './collection-search.js'

/** Owns the search of every collection index of one service instance. */
export class SiteSearch {
  readonly #stateDir: string | null
  readonly #byIndex = new WeakMap<CollectionIndex, CollectionSearch>()

  /**
   * @param opts `stateDir`: the state folder (`.git/cms`) the databases go under (null: in memory)
   */
  constructor (opts: { stateDir: string | null }) {
    this.#stateDir = opts.stateDir
  }

  /** Makes the search of a new collection index (the content store's `companion` option). */
  readonly companion = (index: CollectionIndex): IndexCompanion => {
    const search = new CollectionSearch(index, { stateDir: this.#stateDir })
    this.#byIndex.set(index, search)
    return search
  }

  /**
   * The search of a collection index.
   * @returns its search; throws when the index was made without one
   */
  of (index: CollectionIndex): CollectionSearch {
    const search = this.#byIndex.get(index)
    if (search === undefined) throw new Error(`no search for collection ${index.collection.name}`)
    return search
  }
}
