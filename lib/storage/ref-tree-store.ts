/**
 * A git ref holding one JSON document per entry at `<collection>/<2 hex of sha1(id)>/<id>.json`.
 * Updates that arrive while a commit is written go into the next one; a commit lands by
 * compare-and-swap (updates are applied again when an outside writer moved the ref), and an update
 * resolves once it is durably on the ref.
 */
import { hash } from 'node:crypto'
import { COLLECTION_NAME, isEntryId } from './names.js'
import { assertRefName, parseTree, type GitStore, type TreeEntry } from './git-store.js'
import { NewObjects } from './new-objects.js'
import { StorageUnavailableError } from '../errors.js'
import type { RecordSigner } from './record-signature.js'

/** Where a document lives. */
export interface DocKey {
  collection: string
  id: string
}

/** One change: set or delete one document (return null to delete), or drop a whole collection. */
export type TreeUpdate<T> =
  | { type: 'update', collection: string, id: string, update: (current: T | null) => T | null }
  | { type: 'removeCollection', collection: string }

export interface RefTreeStoreOptions<T> {
  git: GitStore
  /** The full ref name, such as `refs/cms/history`. */
  ref: string
  /** Reads a document's text (documents are written as JSON); must not throw: it maps bad text to a T. */
  decode: (text: string, key: DocKey) => T
  message: string
  /** Signs each commit's message (record-signature.ts); unsigned without one. */
  signer?: RecordSigner
  /** Delete the ref (compare-and-swap) when an update leaves it holding no document, rather than commit an empty tree. */
  deleteWhenEmpty?: boolean
}

const SHARD = /^[0-9a-f]{2}$/
const FILE_SUFFIX = '.json'
/** An id that is its own tree name (every id before section 11). */
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/
/** How often updates are applied again when outside writers keep moving the ref. */
const MAX_ATTEMPTS = 20

/**
 * The shard directory of an entry id.
 * @param id an entry id
 * @returns two hex digits
 */
export function shardOf (id: string): string {
  return hash('sha1', id).slice(0, 2)
}

/**
 * The tree name of an entry's document: `<id>.json`, every byte but ASCII letters, digits, `_`, `-` as `%XX`.
 * @param id an entry id
 * @returns the file name in its shard tree
 */
export function treeNameOf (id: string): string {
  return `${PLAIN_NAME.test(id) ? id : percentEncode(id, /[A-Za-z0-9_-]/)}${FILE_SUFFIX}`
}

/**
 * A string with every UTF-8 byte outside `keep` written `%XX`.
 * @param text the string
 * @param keep matches the (ASCII) characters kept as they are
 * @returns the encoded string
 */
export function percentEncode (text: string, keep: RegExp): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += keep.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * The id a tree name holds, or null when it is not one of ours.
 * @param name a file name in a shard tree
 * @returns the id
 */
export function idOfTreeName (name: string): string | null {
  if (!name.endsWith(FILE_SUFFIX)) return null
  let id: string
  try { id = decodeURIComponent(name.slice(0, -FILE_SUFFIX.length)) } catch { return null }
  // One spelling per id: a name that does not encode back to itself is not ours.
  return isEntryId(id) && treeNameOf(id) === name ? id : null
}

interface Job<T> {
  updates: ReadonlyArray<TreeUpdate<T>>
  resolve: () => void
  reject: (err: unknown) => void
}

/** A commit whose compare-and-swap is in flight: `landed` is true once the ref holds `head` (else its jobs go again). */
interface Landing<T> {
  head: string | null
  jobs: Array<Job<T>>
  landed: Promise<boolean>
}

/** Resolves each job, or rejects those whose update threw. */
function settle<T> (jobs: ReadonlyArray<Job<T>>, failed: ReadonlyMap<Job<T>, unknown>): void {
  for (const job of jobs) {
    if (failed.has(job)) job.reject(failed.get(job))
    else job.resolve()
  }
}

/** A built commit: its id, null when nothing changed, DELETED when the ref is to go. */
const DELETED = Symbol('deleted')
interface Built<T> {
  commit: string | null | typeof DELETED
  failed: Map<Job<T>, unknown>
}

/** The documents a commit changes: text, or null for deleted; and the collections it drops. */
interface Changes {
  docs: Map<string, DocKey & { text: string | null }>
  dropped: Set<string>
}

/** Per-entry JSON documents on one git ref. */
export class RefTreeStore<T> {
  readonly ref: string
  readonly #opts: RefTreeStoreOptions<T>
  #queue: Array<Job<T>> = []
  /** The commit being written (resolves when it and everything queued behind it are done). */
  #draining: Promise<void> | null = null
  /** The trees the last build wrote: the next one, built on its commit, need not ask git for them. */
  #lastBuilt: BuiltTrees | null = null

  /** @param opts the ref, its git store, decoder, commit message and signer */
  constructor (opts: RefTreeStoreOptions<T>) {
    this.ref = assertRefName(opts.ref)
    this.#opts = opts
  }

  /**
   * Reads one document.
   * @param collection collection name
   * @param id entry id
   * @returns the decoded document, or null when there is none
   */
  async read (collection: string, id: string): Promise<T | null> {
    const blob = await this.#opts.git.objects.read(`${this.ref}:${collection}/${shardOf(id)}/${treeNameOf(id)}`)
    return blob?.type === 'blob' ? this.#opts.decode(blob.content.toString('utf8'), { collection, id }) : null
  }

  /**
   * Reads every document, or those of one collection or one entry.
   * @param scope optional collection and id
   * @returns the documents, sorted by collection then id
   */
  async list (scope: { collection?: string, id?: string } = {}): Promise<Array<DocKey & { doc: T }>> {
    const files = await this.#files(scope)
    return await Promise.all(files.map(async ({ oid, ...key }) => {
      const blob = await this.#opts.git.objects.read(oid)
      return { ...key, doc: this.#opts.decode(blob?.content.toString('utf8') ?? '', key) }
    }))
  }

  /**
   * The keys of every document, without reading the documents.
   * @returns collection and id of each, sorted by collection then id
   */
  async keys (): Promise<DocKey[]> {
    return (await this.#files({})).map(f => ({ collection: f.collection, id: f.id }))
  }

  /**
   * Applies updates in the next commit on the ref. An update function may run more than once (when
   * the ref moved under us; the last run landed); one that throws fails only its own caller.
   * @param updates the changes, applied in order
   * @returns resolves once the change is durably on the ref
   */
  async update (updates: Array<TreeUpdate<T>>): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#queue.push({ updates, resolve, reject })
      this.#draining ??= this.#drain()
    })
  }

  /**
   * Waits until every update queued before the call is on the ref.
   * @returns resolves when idle
   */
  async idle (): Promise<void> {
    await this.#draining
  }

  /** Takes the queue in batches, each built while the one before lands (one fsync round less per commit). */
  async #drain (): Promise<void> {
    let landing: Landing<T> | null = null
    while (this.#queue.length > 0 || landing !== null) {
      const jobs = this.#queue
      this.#queue = []
      if (jobs.length > 0) {
        landing = await this.#pipeline(jobs, landing)
      } else if (landing !== null) {
        if (!await landing.landed) await this.#commit(landing.jobs)
        landing = null
      }
    }
    this.#draining = null
  }

  /** Builds the jobs' commit on `previous` and starts its CAS; when `previous` did not land, both go again in turn. */
  async #pipeline (jobs: Array<Job<T>>, previous: Landing<T> | null): Promise<Landing<T> | null> {
    let head: string | null
    let built: Built<T>
    try {
      head = previous !== null ? previous.head : await this.#opts.git.readRef(this.ref)
      built = await this.#build(head, jobs)
    } catch (err) {
      if (previous !== null && !await previous.landed) await this.#commit(previous.jobs)
      for (const job of jobs) job.reject(err)
      return null
    }
    if (previous !== null && !await previous.landed) {
      await this.#commit(previous.jobs)
      await this.#commit(jobs)
      return null
    }
    if (built.commit === null) {
      settle(jobs, built.failed)
      return { head, jobs: [], landed: Promise.resolve(true) }
    }
    const landed = this.#land(built.commit, head).then(outcome => {
      if (outcome !== 'ok') return false
      settle(jobs, built.failed)
      return true
    }, (err: unknown) => {
      for (const job of jobs.splice(0)) job.reject(err)
      return false
    })
    return { head: built.commit === DELETED ? null : built.commit, jobs, landed }
  }

  /** Builds one commit of the jobs on the ref's value and lands it, trying again when the ref moved; settles every job. */
  async #commit (jobs: Array<Job<T>>): Promise<void> {
    if (jobs.length === 0) return
    let failed = new Map<Job<T>, unknown>()
    try {
      for (let attempt = 1; ; attempt++) {
        const head = await this.#opts.git.readRef(this.ref)
        const built = await this.#build(head, jobs)
        failed = built.failed
        if (built.commit === null || await this.#land(built.commit, head) === 'ok') break
        if (attempt === MAX_ATTEMPTS) throw new StorageUnavailableError(`${this.ref} keeps changing under us`, { ref: this.ref })
      }
    } catch (err) {
      for (const job of jobs) job.reject(err)
      return
    }
    settle(jobs, failed)
  }

  /** Moves the ref from `head` to the built commit, or deletes it (compare-and-swap either way). */
  async #land (commit: string | typeof DELETED, head: string | null): Promise<'ok' | 'moved'> {
    if (commit === DELETED) return head === null ? 'ok' : await this.#opts.git.refs.update(this.ref, null, head)
    return await this.#opts.git.refs.update(this.ref, commit, head)
  }

  /** Applies the jobs in order on `head` and writes the commit (null: nothing changed; DELETED: the ref goes). */
  async #build (head: string | null, jobs: Array<Job<T>>): Promise<Built<T>> {
    const base = new BaseTree(this.#opts.git, head, this.#lastBuilt)
    const failed = new Map<Job<T>, unknown>()
    let changes: Changes = { docs: new Map(), dropped: new Set() }
    await Promise.all([base.tree(''), ...jobs.flatMap(j => j.updates).flatMap(u => u.type === 'update'
      ? [base.text(u.collection, u.id), base.tree(u.collection), base.tree(`${u.collection}/${shardOf(u.id)}`)]
      : [])])
    for (const job of jobs) {
      // Applied to a copy, so a job that throws leaves nothing behind.
      const next: Changes = { docs: new Map(changes.docs), dropped: new Set(changes.dropped) }
      try {
        for (const u of job.updates) await this.#apply(base, next, u)
        changes = next
      } catch (err) {
        failed.set(job, err)
      }
    }
    const objects = new NewObjects(this.#opts.git.gitDir)
    try {
      const trees = new Map<string, TreeEntry[]>()
      const root = await this.#writeRoot(base, objects, changes, trees)
      if (root === (await base.tree('')).oid || (head === null && root === EMPTY_TREE)) return { commit: null, failed }
      if (root === EMPTY_TREE && this.#opts.deleteWhenEmpty === true) return { commit: DELETED, failed }
      const { signer, message } = this.#opts
      const commit = objects.commit(root, head, signer?.sign(this.ref, message, root, head) ?? message)
      await objects.durable()
      this.#lastBuilt = { commit, root, trees }
      return { commit, failed }
    } finally {
      await objects.discard()
    }
  }

  async #apply (base: BaseTree, changes: Changes, u: TreeUpdate<T>): Promise<void> {
    if (u.type === 'removeCollection') {
      changes.dropped.add(u.collection)
      for (const [key, doc] of changes.docs) if (doc.collection === u.collection) changes.docs.delete(key)
      return
    }
    const key = `${u.collection}/${u.id}`
    const changed = changes.docs.get(key)
    const before = changed !== undefined ? changed.text : changes.dropped.has(u.collection) ? null : await base.text(u.collection, u.id)
    const next = u.update(before === null ? null : this.#opts.decode(before, { collection: u.collection, id: u.id }))
    changes.docs.set(key, { collection: u.collection, id: u.id, text: next === null ? null : `${JSON.stringify(next)}\n` })
  }

  /** Writes the changed documents and the trees above them; returns the new root tree. */
  async #writeRoot (base: BaseTree, objects: NewObjects, changes: Changes, trees: Map<string, TreeEntry[]>): Promise<string> {
    const byCollection = new Map<string, Map<string, Array<DocKey & { text: string | null }>>>()
    for (const doc of changes.docs.values()) {
      const shards = byCollection.get(doc.collection) ?? new Map<string, Array<DocKey & { text: string | null }>>()
      byCollection.set(doc.collection, shards)
      const shard = shardOf(doc.id)
      shards.set(shard, [...(shards.get(shard) ?? []), doc])
    }
    const root = entryMap((await base.tree('')).entries)
    for (const collection of changes.dropped) root.delete(collection)
    await Promise.all([...byCollection].map(async ([collection, shards]) => {
      const fresh = changes.dropped.has(collection)
      const tree = entryMap(fresh ? [] : (await base.tree(collection)).entries)
      await Promise.all([...shards].map(async ([shard, docs]) => {
        const files = entryMap(fresh ? [] : (await base.tree(`${collection}/${shard}`)).entries)
        for (const doc of docs) {
          const name = treeNameOf(doc.id)
          if (doc.text === null) files.delete(name)
          else files.set(name, { mode: '100644', path: name, oid: objects.blob(doc.text), type: 'blob' })
        }
        setTree(objects, trees, tree, shard, files)
      }))
      setTree(objects, trees, root, collection, tree)
    }))
    return writeTree(objects, trees, [...root.values()])
  }

  /** The document files in scope at the ref's current commit, sorted by collection then id. */
  async #files (scope: { collection?: string, id?: string }): Promise<Array<DocKey & { oid: string }>> {
    const base = new BaseTree(this.#opts.git, await this.#opts.git.readRef(this.ref), this.#lastBuilt)
    const collections = (await base.tree('')).entries.filter(e => e.type === 'tree' && COLLECTION_NAME.test(e.path) && (scope.collection === undefined || e.path === scope.collection))
    const found = await Promise.all(collections.map(async coll => {
      const shards = (await base.tree(coll.path)).entries.filter(e => e.type === 'tree' && SHARD.test(e.path) && (scope.id === undefined || e.path === shardOf(scope.id)))
      return (await Promise.all(shards.map(async shard => (await base.tree(`${coll.path}/${shard.path}`)).entries.flatMap(file => {
        const id = file.type === 'blob' ? idOfTreeName(file.path) : null
        if (id === null || shardOf(id) !== shard.path || (scope.id !== undefined && id !== scope.id)) return []
        return [{ collection: coll.path, id, oid: file.oid }]
      })))).flat()
    }))
    return found.flat().sort((a, b) => compare(a.collection, b.collection) || compare(a.id, b.id))
  }
}

/** git's empty tree. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** A built commit, its root tree and the entries of every tree it wrote, by tree id. */
interface BuiltTrees {
  commit: string
  root: string
  trees: ReadonlyMap<string, TreeEntry[]>
}

/** The trees and documents a build starts from, each read once by id (2 reads a save, not 13) or taken from the last build. */
class BaseTree {
  readonly #trees = new Map<string, Promise<{ oid: string | null, entries: TreeEntry[], byName: Map<string, TreeEntry> }>>()
  readonly #texts = new Map<string, Promise<string | null>>()

  constructor (private readonly git: GitStore, private readonly head: string | null, private readonly built: BuiltTrees | null) {}

  /** The tree at a path ('' for the root): its id (null: none) and entries. */
  async tree (at: string): Promise<{ oid: string | null, entries: TreeEntry[], byName: Map<string, TreeEntry> }> {
    let tree = this.#trees.get(at)
    if (tree === undefined) {
      tree = this.#readTree(at)
      this.#trees.set(at, tree)
    }
    return await tree
  }

  async #readTree (at: string): Promise<{ oid: string | null, entries: TreeEntry[], byName: Map<string, TreeEntry> }> {
    const none = { oid: null, entries: [], byName: new Map<string, TreeEntry>() }
    if (this.head === null) return none
    let name = `${this.head}^{tree}`
    if (at === '' && this.built?.commit === this.head) name = this.built.root
    if (at !== '') {
      const slash = at.lastIndexOf('/')
      const entry = (await this.tree(slash < 0 ? '' : at.slice(0, slash))).byName.get(at.slice(slash + 1))
      if (entry?.type !== 'tree') return none
      name = entry.oid
    }
    const written = this.built?.trees.get(name)
    if (written !== undefined) return { oid: name, entries: written, byName: entryMap(written) }
    const object = await this.git.objects.read(name)
    if (object?.type !== 'tree') return none
    const entries = parseTree(object.content)
    return { oid: object.oid, entries, byName: entryMap(entries) }
  }

  /** A document's text (null: none). */
  async text (collection: string, id: string): Promise<string | null> {
    const at = `${collection}/${shardOf(id)}/${treeNameOf(id)}`
    let text = this.#texts.get(at)
    if (text === undefined) {
      text = this.tree(`${collection}/${shardOf(id)}`).then(async shard => {
        const entry = shard.byName.get(treeNameOf(id))
        if (entry?.type !== 'blob') return null
        const object = await this.git.objects.read(entry.oid)
        return object?.type === 'blob' ? object.content.toString('utf8') : null
      })
      this.#texts.set(at, text)
    }
    return await text
  }
}

function entryMap (entries: readonly TreeEntry[]): Map<string, TreeEntry> {
  return new Map(entries.map(e => [e.path, e]))
}

/** Puts a subtree into its parent, or removes it when it ended up empty. */
function setTree (objects: NewObjects, trees: Map<string, TreeEntry[]>, parent: Map<string, TreeEntry>, name: string, entries: Map<string, TreeEntry>): void {
  if (entries.size === 0) parent.delete(name)
  else parent.set(name, { mode: '40000', path: name, oid: writeTree(objects, trees, [...entries.values()]), type: 'tree' })
}

/** Writes a tree and keeps its entries by its id. */
function writeTree (objects: NewObjects, trees: Map<string, TreeEntry[]>, entries: TreeEntry[]): string {
  const oid = objects.tree(entries)
  trees.set(oid, entries)
  return oid
}

function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
