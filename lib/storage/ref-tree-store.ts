/**
 * A git ref holding one JSON document per entry: the ref points at a commit whose tree has
 * `<collection>/<2 hex of sha1(id)>/<id>.json`. Sharding keeps an update to a few small tree
 * objects however many entries a collection has. A commit's objects are written as one pack by
 * PackStore and read by GitObjectReader (no git process per request), and cached by object id,
 * which never goes stale; the ref itself is re-read on every call (one small file), so outside
 * writers are always seen.
 *
 * Writes are grouped (`GroupCommit`, shared by every store of the git directory): while one group
 * is being written, later updates of this and the other refs queue up and then go into the next
 * group together, one commit per ref, one pack for all. A write resolves only once its change is on
 * the ref; when an outside writer moved the ref meanwhile, its updates are recomputed on the new
 * value and retried.
 */
import { hash } from 'node:crypto'
import { readRef, assertRefName } from './git-refs.js'
import { COLLECTION_NAME, isEntryId } from './names.js'
import { ObjectBatch, treeIdOffsets, type TreeItem } from './object-batch.js'
import { GitObjectReader } from './git-object-reader.js'
import { PackStore } from './pack-store.js'
import { LRUCache } from 'lru-cache'
import type { FileWrite, LandedCommit, RefSource } from './group-commit.js'

/** Where a document lives. */
export interface DocKey {
  collection: string
  id: string
}

/** A document with its key. */
export interface StoredDoc<T> extends DocKey {
  doc: T
}

/** Turns documents into file text and back. `decode` must not throw: it maps bad text to a T. */
export interface DocCodec<T> {
  decode: (text: string, key: DocKey) => T
  encode: (doc: T) => string
}

/**
 * A document's text with what its writer remembered of its layout (`DocEdit`): kept per blob id for
 * the documents this process wrote, so the next edit of one need not decode it.
 */
export interface DocText {
  text: string
  /** What the edit that made the text returned with it (undefined: not made by an edit, or forgotten). */
  layout: unknown
}

/**
 * Edits a document's text directly (the history fold appends snapshots to the text it wrote
 * before, instead of decoding and encoding the whole document). Returns undefined to decline: the
 * update's `update` function then runs on the decoded document as usual. It must give the exact
 * text `encode(update(decode(before)))` would, and may only rely on a layout it made itself.
 */
export type DocEdit = (before: DocText | null) => { text: string, layout: unknown } | undefined

/** One change: set or delete one document (return null to delete), or drop a whole collection. */
export type TreeUpdate<T> =
  | { type: 'update', collection: string, id: string, update: (current: T | null) => T | null, edit?: DocEdit }
  | { type: 'removeCollection', collection: string }

/** Options of a RefTreeStore. */
export interface RefTreeStoreOptions<T> {
  /** The `.git` directory. */
  gitDir: string
  /** The full ref name, such as `refs/cms/history`. */
  ref: string
  codec: DocCodec<T>
  /** The commit message of every update. */
  message: string
  /** The git directory's packs (shared by the stores of one instance); one of its own by default. */
  packs?: PackStore
}

/** The author and committer of every commit we write. */
const AUTHOR = { name: 'git-cms', email: 'git-cms@users.git-cms.invalid' }
const SHARD = /^[0-9a-f]{2}$/
const FILE_SUFFIX = '.json'
/** Trees with at least this many entries keep their encoding for patching (smaller: re-encoded). */
const PATCH_MIN_ENTRIES = 32
/** How many objects a listing reads from disk at once (stays far below the open-file limit). */
const READ_CONCURRENCY = 32
/** A batch of updates yields to the event loop after each run of this many (see build). */
const YIELD_EVERY = 32
/** How many blobs' edit layouts are kept (the documents written last: the next fold's likely edits). */
const LAYOUTS_KEPT = 4096

type Tree = Map<string, TreeItem>

/** A tree's encoding kept for patching, and its ids' offsets (by name) once worked out. */
interface EncodedTree {
  content: Buffer
  offsets: { map: Map<string, number> | null }
}

/** A mutable copy of one tree level while a batch is applied. */
interface TreeDraft {
  /** The stored tree it was copied from (null: a new level). */
  base: string | null
  entries: Tree
  /** Whether something below changed (an untouched level keeps its stored tree). */
  dirty: boolean
  children: Map<string, TreeDraft>
  /** Changed files: the new text, or null for deleted. */
  files: Map<string, string | null>
  /** The layouts the edits of changed files returned (see DocEdit). */
  layouts: Map<string, unknown>
}

/** An update function threw: only its own caller fails, not the others sharing the commit. */
class UpdateFunctionError extends Error {
  constructor (readonly reason: unknown) {
    super('An update function failed')
  }
}

/**
 * The shard directory of an entry id.
 * @param id an entry id
 * @returns two hex digits
 */
export function shardOf (id: string): string {
  return hash('sha1', id).slice(0, 2)
}

/**
 * The tree name of an entry's document: `<id>.json`, where every byte of the id other than
 * ASCII letters, digits, `_` and `-` is written `%XX` (so `/`, spaces, dots and non-ASCII never
 * reach a tree name, and a name is never `.git`-like). Plain ids (`[A-Za-z0-9_-]`, all ids before
 * section 11) are unchanged, so existing refs stay readable as they are.
 * @param id an entry id
 * @returns the file name in its shard tree
 */
export function treeNameOf (id: string): string {
  return `${encodeTreeName(id)}${FILE_SUFFIX}`
}

/**
 * The id a tree name holds, or null when it is not one of ours.
 * @param name a file name in a shard tree
 * @returns the id
 */
export function idOfTreeName (name: string): string | null {
  if (!name.endsWith(FILE_SUFFIX)) return null
  const encoded = name.slice(0, -FILE_SUFFIX.length)
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(encoded)) return null
  let id: string
  try { id = decodeURIComponent(encoded) } catch { return null }
  // One spelling per id: a name that does not re-encode to itself is not ours.
  return isEntryId(id) && encodeTreeName(id) === encoded ? id : null
}

/** An id that is its own tree name (every id before section 11). */
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/

function encodeTreeName (id: string): string {
  if (PLAIN_NAME.test(id)) return id
  let out = ''
  for (const byte of Buffer.from(id, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Per-entry JSON documents on one git ref. */
export class RefTreeStore<T> implements RefSource {
  private readonly gitDir: string
  /** The full ref name. */
  readonly ref: string
  private readonly codec: DocCodec<T>
  private readonly message: string
  private readonly packs: PackStore
  private readonly reader: GitObjectReader
  private readonly commitTrees = new LRUCache<string, string>({ max: 1000 })
  private readonly trees = new LRUCache<string, Tree>({ maxSize: 200_000, sizeCalculation: tree => tree.size + 1 })
  private readonly texts = new LRUCache<string, string>({ maxSize: 32 * 1024 * 1024, sizeCalculation: text => text.length + 64 })
  private readonly counts = new LRUCache<string, number>({ max: 64 })
  /** The layouts DocEdit functions returned with the texts of blobs this process wrote (a few hundred bytes each). */
  private readonly layouts = new LRUCache<string, { layout: unknown }>({ max: LAYOUTS_KEPT })
  /**
   * Encoded large trees this process wrote, to patch (see writeDraft), with their ids' offsets once
   * a patch needed them (shared by the trees patched from one encoding: same names, same offsets).
   */
  private readonly encoded = new LRUCache<string, EncodedTree>({ maxSize: 4 * 1024 * 1024, sizeCalculation: e => Math.max(1, e.content.length * 2) })

  /** @param opts git directory, ref, codec and commit message */
  constructor (opts: RefTreeStoreOptions<T>) {
    this.gitDir = opts.gitDir
    this.packs = opts.packs ?? new PackStore(opts.gitDir)
    this.reader = new GitObjectReader(opts.gitDir, this.packs)
    this.ref = assertRefName(opts.ref)
    this.codec = opts.codec
    this.message = opts.message
  }

  /**
   * Reads one document.
   * @param collection collection name
   * @param id entry id
   * @returns the decoded document, or null when there is none
   */
  async read (collection: string, id: string): Promise<T | null> {
    const root = await this.currentRoot()
    if (root === null) return null
    const oid = await this.fileOid(root, collection, id)
    if (oid === null) return null
    return this.codec.decode(await this.text(oid), { collection, id })
  }

  /**
   * Reads one document as of a given commit of the ref (a caller that read the ref itself).
   * @param head the ref's value (null: no ref)
   * @param collection collection name
   * @param id entry id
   * @returns the decoded document, or null when there is none
   */
  async readAt (head: string | null, collection: string, id: string): Promise<T | null> {
    if (head === null) return null
    const oid = await this.fileOid(await this.treeOfCommit(head), collection, id)
    if (oid === null) return null
    return this.codec.decode(await this.text(oid), { collection, id })
  }

  /**
   * A document's text as of a given commit, with the layout the edit that wrote it returned (when
   * this process wrote it and still remembers: see DocEdit), undecoded.
   * @param head the ref's value (null: no ref)
   * @param collection collection name
   * @param id entry id
   * @returns the text and layout, or null when there is no document
   */
  async readTextAt (head: string | null, collection: string, id: string): Promise<DocText | null> {
    if (head === null) return null
    const oid = await this.fileOid(await this.treeOfCommit(head), collection, id)
    if (oid === null) return null
    return { text: await this.text(oid), layout: this.layouts.get(oid)?.layout }
  }

  /**
   * Reads every document, or those of one collection or one entry.
   * @param scope optional collection and id
   * @returns the documents, sorted by collection then id
   */
  async list (scope: { collection?: string, id?: string } = {}): Promise<Array<StoredDoc<T>>> {
    const root = await this.currentRoot()
    if (root === null) return []
    const files = await this.filesOf(root, scope)
    const docs = new Array<StoredDoc<T>>(files.length)
    for (let start = 0; start < files.length; start += READ_CONCURRENCY) {
      await Promise.all(files.slice(start, start + READ_CONCURRENCY).map(async (file, i) => {
        const key = { collection: file.collection, id: file.id }
        docs[start + i] = { ...key, doc: this.codec.decode(await this.text(file.oid), key) }
      }))
    }
    return docs
  }

  /**
   * The keys of every document, without reading the documents.
   * @returns collection and id of each, sorted by collection then id
   */
  async keys (): Promise<DocKey[]> {
    const root = await this.currentRoot()
    if (root === null) return []
    return (await this.filesOf(root, {})).map(f => ({ collection: f.collection, id: f.id }))
  }

  /**
   * Counts the documents without decoding them.
   * @returns the number of documents on the ref
   */
  async count (): Promise<number> {
    const root = await this.currentRoot()
    if (root === null) return 0
    const known = this.counts.get(root)
    if (known !== undefined) return known
    const count = (await this.filesOf(root, {})).length
    this.counts.set(root, count)
    return count
  }

  /**
   * Applies updates as part of the next commit on the ref (together with any other updates queued
   * meanwhile, on this ref and others). An update function may run more than once (when the ref
   * moved under us); the last run is the one that landed.
   * @param updates the changes, applied in order
   * @param files files to replace atomically once the change is durable on the ref (an entry file
   *   replaced only after the history snapshot of its old state is on the history ref)
   * @returns resolves once the change is on the ref and the files are in place
   */
  async update (updates: Array<TreeUpdate<T>>, files: readonly FileWrite[] = []): Promise<void> {
    await this.packs.group.submit(this, updates, files)
  }

  /**
   * `update`, telling which commit landed.
   * @param updates the changes, applied in order
   * @returns the commit holding the change and its parent (null when nothing changed)
   */
  async updateWithCommit (updates: Array<TreeUpdate<T>>): Promise<LandedCommit | null> {
    return await this.packs.group.submitWithCommit(this, updates)
  }

  /**
   * Builds one commit on `head` holding every job's updates (used by GroupCommit). A job whose
   * update function throws is left out and reported, so it fails only its own caller.
   * @param head the ref's current value
   * @param jobs each job's updates, applied in order
   * @param batch where the new objects go
   * @returns the commit (null when nothing changed) and the failed jobs
   */
  async build (head: string | null, jobs: ReadonlyArray<ReadonlyArray<TreeUpdate<T>>>, batch: ObjectBatch): Promise<{ commit: string | null, failed: Map<number, unknown> }> {
    const rootOid = head === null ? null : await this.treeOfCommit(head)
    const stored = rootOid === null ? new Map<string, TreeItem>() : await this.tree(rootOid)
    // Warm the caches in parallel; applying the updates is sequential (their order matters).
    if (rootOid !== null) await this.prefetch(rootOid, jobs.flat())
    const failed = new Map<number, unknown>()
    for (;;) {
      const root = draftOf(stored, rootOid)
      let changed = false
      let failedNow = false
      let applied = 0
      for (let i = 0; i < jobs.length && !failedNow; i++) {
        if (failed.has(i)) continue
        try {
          for (const update of jobs[i]!) {
            if (await this.applyUpdate(root, update)) changed = true
            // A large batch (the history journal's fold) lets requests in between: its documents
            // are decoded and encoded here, ~20-40 µs each, on the service thread.
            if (++applied % YIELD_EVERY === 0) await yieldToLoop()
          }
        } catch (err) {
          if (!(err instanceof UpdateFunctionError)) throw err
          // Start again without it: its earlier updates may already be in the draft.
          failed.set(i, err.reason)
          failedNow = true
        }
      }
      if (failedNow) continue
      if (!changed) return { commit: null, failed }
      const treeOid = this.writeDraft(batch, root, true) as string
      const commitOid = batch.commit({
        tree: treeOid,
        parents: head === null ? [] : [head],
        author: { ...AUTHOR, timestamp: Math.floor(Date.now() / 1000) },
        message: this.message
      })
      this.commitTrees.set(commitOid, treeOid)
      return { commit: commitOid, failed }
    }
  }

  /** Applies one update to the draft; returns whether anything changed. */
  private async applyUpdate (root: TreeDraft, update: TreeUpdate<T>): Promise<boolean> {
    if (update.type === 'removeCollection') {
      const existed = root.entries.delete(update.collection) || root.children.get(update.collection)?.dirty === true
      root.children.delete(update.collection)
      return existed
    }
    const key = { collection: update.collection, id: update.id }
    const collection = await this.childDraft(root, update.collection)
    const shard = await this.childDraft(collection, shardOf(update.id))
    const name = treeNameOf(update.id)
    let before: string | null
    let layout: unknown
    if (shard.files.has(name)) {
      before = shard.files.get(name) ?? null
      layout = shard.layouts.get(name)
    } else {
      const entry = shard.entries.get(name)
      before = entry === undefined ? null : await this.text(entry.oid)
      layout = entry === undefined ? undefined : this.layouts.get(entry.oid)?.layout
    }
    let after: string | null
    let afterLayout: unknown
    try {
      const edited = update.edit?.(before === null ? null : { text: before, layout })
      if (edited !== undefined) {
        after = edited.text
        afterLayout = edited.layout
      } else {
        const next = update.update(before === null ? null : this.codec.decode(before, key))
        after = next === null ? null : this.codec.encode(next)
      }
    } catch (err) {
      throw new UpdateFunctionError(err)
    }
    if (after === before) return false
    shard.files.set(name, after)
    if (afterLayout !== undefined) shard.layouts.set(name, afterLayout)
    else shard.layouts.delete(name)
    shard.dirty = true
    collection.dirty = true
    return true
  }

  /** The draft of a subtree, created from the stored tree (or empty) on first use. */
  private async childDraft (parent: TreeDraft, name: string): Promise<TreeDraft> {
    let child = parent.children.get(name)
    if (child === undefined) {
      const entry = parent.entries.get(name)
      child = draftOf(entry?.type === 'tree' ? await this.tree(entry.oid) : new Map(), entry?.type === 'tree' ? entry.oid : null)
      parent.children.set(name, child)
    }
    return child
  }

  /** Adds a changed tree level and its changed children to the batch; null when it ended up empty. */
  private writeDraft (batch: ObjectBatch, draft: TreeDraft, keepEmpty = false): string | null {
    // The draft's map is its own copy (draftOf): it becomes the new tree's cached entries.
    const entries: Tree = draft.entries
    // When only ids of existing entries change (a shard's id in the collection's tree, a saved
    // entry's document in its shard), the base tree's encoding is patched (see treePatched).
    const base = draft.base === null ? undefined : this.encoded.get(draft.base)
    const changed: Array<{ name: string, oid: string }> = []
    let patchable = base !== undefined
    const change = (name: string, item: TreeItem | null): void => {
      const before = entries.get(name)
      if (item === null) entries.delete(name)
      else entries.set(name, item)
      if (!patchable) return
      if (item === null || before === undefined || before.type !== item.type || sameMode(before.mode) !== sameMode(item.mode)) patchable = false
      else changed.push({ name, oid: item.oid })
    }
    for (const [name, child] of draft.children) {
      if (!child.dirty) continue
      const oid = this.writeDraft(batch, child)
      change(name, oid === null ? null : { mode: '040000', path: name, oid, type: 'tree' })
    }
    for (const [name, text] of draft.files) {
      if (text === null) { change(name, null); continue }
      // Encoded once, into its pack entry (no buffer of its own to copy into the entry).
      const oid = batch.blobText(text)
      this.texts.set(oid, text)
      const layout = draft.layouts.get(name)
      if (layout !== undefined) this.layouts.set(oid, { layout })
      change(name, { mode: '100644', path: name, oid, type: 'blob' })
    }
    if (entries.size === 0 && !keepEmpty) return null
    // The offsets of the base's ids, worked out only now that a patch needs them (a tree that gained
    // or lost a name, as a shard does at an entry's first save, is encoded again and never needs them).
    let patches: Array<{ at: number, oid: string }> | null = null
    if (patchable && base !== undefined) {
      const offsets = base.offsets.map ??= treeIdOffsets(base.content)
      patches = []
      for (const c of changed) {
        const at = offsets.get(c.name)
        if (at === undefined) { patches = null; break }
        patches.push({ at, oid: c.oid })
      }
    }
    let oid: string
    if (patches !== null && base !== undefined) {
      const patched = batch.treePatched(base.content, patches)
      oid = patched.oid
      this.encoded.set(oid, { content: patched.content, offsets: base.offsets })
    } else {
      oid = batch.tree([...entries.values()])
      if (entries.size >= PATCH_MIN_ENTRIES) this.encoded.set(oid, { content: batch.objects.at(-1)!.content, offsets: { map: null } })
    }
    this.trees.set(oid, entries)
    return oid
  }

  /** The root tree of the ref's current commit, or null when the ref does not exist. */
  private async currentRoot (): Promise<string | null> {
    const head = await readRef(this.gitDir, this.ref)
    return head === null ? null : await this.treeOfCommit(head)
  }

  private async treeOfCommit (commitOid: string): Promise<string> {
    const known = this.commitTrees.get(commitOid)
    if (known !== undefined) return known
    const tree = await this.reader.readCommitTree(commitOid)
    this.commitTrees.set(commitOid, tree)
    return tree
  }

  private async tree (oid: string): Promise<Tree> {
    const known = this.trees.get(oid)
    if (known !== undefined) return known
    const tree = await this.reader.readTree(oid)
    const entries: Tree = new Map(tree.map(e => [e.path, e]))
    this.trees.set(oid, entries)
    return entries
  }

  private async text (oid: string): Promise<string> {
    const known = this.texts.get(oid)
    if (known !== undefined) return known
    const text = (await this.reader.readBlob(oid)).toString('utf8')
    this.texts.set(oid, text)
    return text
  }

  /**
   * Reads in parallel what the updates will need and the caches lack. What is cached (the trees and
   * the documents this process wrote: a fold's usual case) is looked up synchronously, without a
   * promise per update; only the rest is read, READ_CONCURRENCY at a time.
   */
  private async prefetch (rootOid: string, updates: ReadonlyArray<TreeUpdate<T>>): Promise<void> {
    const missing: Array<{ collection: string, id: string }> = []
    for (const u of updates) {
      if (u.type !== 'update') continue
      const oid = this.cachedFileOid(rootOid, u.collection, u.id)
      if (oid === undefined || (oid !== null && this.texts.get(oid) === undefined)) missing.push(u)
    }
    for (let start = 0; start < missing.length; start += READ_CONCURRENCY) {
      if (start > 0) await yieldToLoop()
      await Promise.all(missing.slice(start, start + READ_CONCURRENCY).map(async (u) => {
        const oid = await this.fileOid(rootOid, u.collection, u.id)
        if (oid !== null) await this.text(oid)
      }))
    }
  }

  /** `fileOid` from the cached trees alone: undefined when a tree on the way is not cached. */
  private cachedFileOid (rootOid: string, collection: string, id: string): string | null | undefined {
    const root = this.trees.get(rootOid)
    if (root === undefined) return undefined
    const coll = root.get(collection)
    if (coll?.type !== 'tree') return null
    const shards = this.trees.get(coll.oid)
    if (shards === undefined) return undefined
    const shard = shards.get(shardOf(id))
    if (shard?.type !== 'tree') return null
    const files = this.trees.get(shard.oid)
    if (files === undefined) return undefined
    const file = files.get(treeNameOf(id))
    return file?.type === 'blob' ? file.oid : null
  }

  private async fileOid (rootOid: string, collection: string, id: string): Promise<string | null> {
    // Cached trees (the usual case) without an await per level.
    const cached = this.cachedFileOid(rootOid, collection, id)
    if (cached !== undefined) return cached
    const coll = (await this.tree(rootOid)).get(collection)
    if (coll?.type !== 'tree') return null
    const shard = (await this.tree(coll.oid)).get(shardOf(id))
    if (shard?.type !== 'tree') return null
    const file = (await this.tree(shard.oid)).get(treeNameOf(id))
    return file?.type === 'blob' ? file.oid : null
  }

  /** The document files in scope, sorted by collection then id; foreign files are skipped. */
  private async filesOf (rootOid: string, scope: { collection?: string, id?: string }): Promise<Array<DocKey & { oid: string }>> {
    const files: Array<DocKey & { oid: string }> = []
    const root = await this.tree(rootOid)
    const collections = scope.collection !== undefined ? [scope.collection] : [...root.keys()]
    for (const collection of collections) {
      const entry = root.get(collection)
      if (entry?.type !== 'tree' || !COLLECTION_NAME.test(collection)) continue
      const shards = await this.tree(entry.oid)
      const names = scope.id !== undefined ? [shardOf(scope.id)] : [...shards.keys()]
      for (const shardName of names) {
        const shard = shards.get(shardName)
        if (shard?.type !== 'tree' || !SHARD.test(shardName)) continue
        for (const [name, file] of await this.tree(shard.oid)) {
          if (file.type !== 'blob') continue
          const id = idOfTreeName(name)
          if (id === null || shardOf(id) !== shardName || (scope.id !== undefined && id !== scope.id)) continue
          files.push({ collection, id, oid: file.oid })
        }
      }
    }
    return files.sort((a, b) => compare(a.collection, b.collection) || compare(a.id, b.id))
  }
}

/** Lets the event loop run what is ready (I/O, timers) before going on. */
async function yieldToLoop (): Promise<void> {
  await new Promise<void>(resolve => setImmediate(resolve))
}

function draftOf (entries: Tree, base: string | null): TreeDraft {
  return { base, entries: new Map(entries), dirty: false, children: new Map(), files: new Map(), layouts: new Map() }
}

/** A tree entry's mode as it is encoded (`040000` and `40000` are the same). */
function sameMode (mode: string): string {
  return mode.replace(/^0+/, '')
}

function compare (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
