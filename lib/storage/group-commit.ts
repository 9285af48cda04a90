/**
 * One group commit for everything written to the git directory at the same time: the updates of
 * every ref (`refs/cms/history`, each editor's `refs/cms/drafts/<id>`) and the entry files that go
 * with them, so concurrent saves share one pack and one round of fsyncs.
 *
 * Files whose record of the replaced state is made durable elsewhere (the history journal: a base
 * save's snapshot) do not wait for a group: `placeAfter` writes and fsyncs them at once and renames
 * them as soon as that record is durable.
 *
 * A job's files are written and fsynced under temporary names as soon as it is submitted (while
 * the groups before it are still being written). Later jobs queue up and form the next group. A
 * group has two halves, pipelined with the groups before and after it:
 *
 * Stage (`#stage`, runs while the group before is still landing):
 *   1. creates the pack's two temporary files (see PackStore.openTemporaries);
 *   2. builds one commit per ref on the ref's current value, or on the commit of the group still in
 *      flight for that ref (whose objects PackStore serves from memory until its pack is placed);
 *      all objects into one pack;
 *   3. fsyncs the pack and its index (and, when no group is in flight any more, the ref lock files,
 *      taken now: one fsync round for both, as before the pipeline), and waits for its jobs' files
 *      (written and fsynced since their submit) in the same round; a job whose files failed makes
 *      the group drop its pack and locks and go back to the queue without that job;
 *   4. renames the index, then the pack, into place and fsyncs the pack directory.
 * The next group is formed from the queue as soon as this stage is done.
 *
 * Land and finish (`#complete`, in group order):
 *   5. once the group before released its ref locks: takes each ref's lock file (unless taken in 3)
 *      and writes and fsyncs the new value into it;
 *   6. compares each ref with the value its commit was built on (compare-and-swap, under its lock)
 *      and renames the lock onto it; the next group may take the locks from here on;
 *   7. fsyncs the refs' directories;
 *   8. after the group before renamed its files, renames the files of the jobs whose ref landed (or
 *      that had none) over their targets and fsyncs their directories; then each job resolves.
 *
 * What must be ordered, and why (a power loss may write back any dirty page or directory block at
 * any moment, in any order, so each "before" below is an fsync that returned before the next step):
 *   - pack and index content, and their names, are durable before a ref can name the commit:
 *     3 and 4 before 6 (else a ref could survive pointing at objects that did not);
 *   - the ref's new value is durable in its lock file before the rename that makes it the ref: 3 or
 *     5 before 6 (else the ref could survive empty or torn);
 *   - the ref update is durable before an entry file is replaced: 7 before 8, so the snapshot of the
 *     state a file held is never lost while the file is already replaced;
 *   - each job's file content is durable before its rename, and the rename durable before the job
 *     resolves: nothing resolves (no save is acknowledged) before it is durable.
 * A group built on the commit of the group before it lands only if that one landed: its
 * compare-and-swap expects that commit, so when the group before failed, or an outside writer moved
 * the ref meanwhile, the comparison refuses it and its jobs are rebuilt in a later group (their files
 * stay written and synced). The other refs' jobs complete. An update function that throws fails only
 * its own job. Two groups replacing one file rename it in group order (8 waits for the group before).
 */
import { readRef, lockRef, RefConflictError, RefLockedError, type RefLock, type SpareFile } from './git-refs.js'
import { StagedFile, TEMP_PREFIX, closeInBackground, syncDirectories, syncFiles } from './atomic-write.js'
import { ObjectBatch } from './object-batch.js'
import { InodePool, openSpare, type FileIdentity, type Spare } from './inode-pool.js'
import { CoalescedSync } from './coalesced-sync.js'
import type { PackStore, StagedPack } from './pack-store.js'
import { StorageUnavailableError } from '../errors.js'
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'

/** Spares an entry file leaves in the pool for ref locks (see `#spareFile`). */
const SPARES_FOR_LOCKS = 32

/** How often a job is rebuilt when outside writers keep moving its ref. */
const MAX_ATTEMPTS = 20

/** A ref whose commits a group builds: implemented by RefTreeStore. */
export interface RefSource {
  /** The full ref name. */
  readonly ref: string
  /**
   * Builds one commit on `head` applying each job's updates in job order, adding its objects to
   * `batch`. A job whose update function throws is left out (and reported), the others kept.
   * @param head the ref's current value (null: no ref yet)
   * @param jobs each job's updates
   * @param batch where the commit's objects go
   * @returns the commit (null when nothing changed) and the failed jobs' errors by job index
   */
  build (head: string | null, jobs: ReadonlyArray<readonly unknown[]>, batch: ObjectBatch): Promise<{ commit: string | null, failed: Map<number, unknown> }>
}

/** A file a job replaces once its ref update is durable. */
export interface FileWrite {
  /** Absolute path of the file. */
  path: string
  data: string | Uint8Array
}

interface Job {
  source: RefSource | null
  updates: readonly unknown[]
  /** The job's files, written and fsynced under temporary names (rejects when they could not be). */
  files: Promise<StagedFile[]>
  staged: StagedFile[]
  attempts: number
  /** Resolved or rejected (a job settles once). */
  settled: boolean
  resolve: (landed: LandedCommit | null) => void
  reject: (err: unknown) => void
  /** The commit of its ref that holds its updates, once landed. */
  landed: LandedCommit | null
}

/** A commit a group put on a ref, and the ref's value it was built on. */
export interface LandedCommit {
  commit: string
  parent: string | null
}

interface RefCommit {
  source: RefSource
  head: string | null
  commit: string
  jobs: Job[]
  lock: RefLock | null
  /** The replaced ref file's inode, kept for reuse once the refs folder is fsynced. */
  spare?: Spare | null
}

/** The pipeline state of one group, for the group after it. */
class GroupState {
  /** Settles once this group's refs moved, conflicted or failed, and its ref locks are released. */
  readonly refsDone: Promise<void>
  /** Settles once this group's files are renamed (or failed): the next group's files go after. */
  readonly placed: Promise<void>
  /** Marks `refsDone`. */
  markRefsDone!: () => void
  /** Marks `placed`. */
  markPlaced!: () => void

  constructor () {
    this.refsDone = new Promise<void>(resolve => { this.markRefsDone = resolve })
    this.placed = new Promise<void>(resolve => { this.markPlaced = resolve })
  }
}

/** A ref's commit built by a group not yet landed, which later groups build on. */
interface PendingHead {
  commit: string
  /** The group that built it. */
  owner: object
}

const SETTLED = new GroupState()
SETTLED.markRefsDone()
SETTLED.markPlaced()

/** The group commit of one `.git` directory (one per instance, shared by its ref stores). */
export class GroupCommit {
  #queue: Job[] = []
  #draining = false
  /** The group last started: the next one takes its ref locks and places its files after it. */
  #last: GroupState = SETTLED
  /** Whether the last group's ref updates are done (its locks released). */
  #lastRefsDone = true
  /** Per ref, the commit of the latest group in flight: the next group builds on it. */
  readonly #pending = new Map<string, PendingHead>()
  /** Temporary names: a per-instance prefix and a counter (no random bytes per file). */
  readonly #tmpPrefix = `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-`
  #tmpCounter = 0
  /** Retired entry-file inodes, reused by later saves (replacing a file then frees nothing). */
  readonly #spares: InodePool
  /** Per target path, the latest `placeAfter` not yet renamed: a later one renames after it. */
  readonly #placing = new Map<string, Promise<void>>()
  /** Coalesced folder fsyncs of `placeAfter` (bounded: a process writes into few folders). */
  readonly #folderSyncs = new Map<string, CoalescedSync>()
  /** Per target path, the pool name of the file this instance placed there (see inode-pool.ts). */
  readonly #named = new Map<string, { file: string, size: number }>()
  /** Tells the pool the mode and owner of a file we created (one function, not one per file). */
  readonly #learn = (identity: FileIdentity): void => { this.#spares.learn(identity) }

  /**
   * @param gitDir the `.git` directory
   * @param packs its packs
   */
  constructor (private readonly gitDir: string, private readonly packs: PackStore) {
    this.#spares = new InodePool(gitDir)
  }

  /**
   * Takes over the spare inodes a previous process left (at start-up, under the instance lock): the
   * first few hundred before this returns, the rest in the background (see `InodePool.adopt`).
   * @returns resolves once the adoption started
   */
  async adoptSpares (): Promise<void> {
    void this.#spares.adopt().catch(() => {})
  }

  /**
   * Applies updates to a ref and then replaces files, as part of the next group.
   * @param source the ref's store (null: files only)
   * @param updates the store's updates, applied in order (may run more than once when the ref moved)
   * @param files files replaced (atomically) once the ref update is durable
   * @returns resolves once everything is durable and in place
   */
  async submit (source: RefSource | null, updates: readonly unknown[], files: readonly FileWrite[] = []): Promise<void> {
    await this.submitWithCommit(source, updates, files)
  }

  /**
   * `submit`, telling which commit landed.
   * @param source the ref's store (null: files only)
   * @param updates the store's updates
   * @param files files replaced once the ref update is durable
   * @returns the commit that holds the updates and its parent (null: nothing changed on the ref)
   */
  async submitWithCommit (source: RefSource | null, updates: readonly unknown[], files: readonly FileWrite[] = []): Promise<LandedCommit | null> {
    if ((source === null || updates.length === 0) && files.length === 0) return null
    return await new Promise<LandedCommit | null>((resolve, reject) => {
      const job: Job = { source: updates.length === 0 ? null : source, updates, files: this.#prepare(files), staged: [], attempts: 0, settled: false, resolve, reject, landed: null }
      // Handled when the group awaits it; this only keeps a failure from counting as unhandled first.
      job.files.catch(() => {})
      this.#enqueue([job], false)
    })
  }

  /**
   * Replaces files outside the groups, once `durable` resolved: for writes whose record of the state
   * they replace is made durable elsewhere (the history journal, history-journal.ts), so they wait
   * for no ref commit. Each file is written and fsynced under a temporary name at once, in the same
   * round as `durable`; then renamed (after any earlier `placeAfter` of the same path), and its folder
   * fsynced (one fsync shared by the placements made meanwhile). When `durable` or a file fails,
   * nothing is replaced and the temporary files are removed.
   * @param files the files to replace
   * @param durable resolves once the record of what they replace is durable
   * @returns resolves once the files are durable and in place
   */
  async placeAfter (files: readonly FileWrite[], durable: Promise<void>): Promise<void> {
    if (files.length === 0) return await durable
    // Renames of one path in call order (callers lock per entry; this keeps it true regardless).
    const before: Array<Promise<void>> = []
    let renamed!: () => void
    const mine = new Promise<void>(resolve => { renamed = resolve })
    for (const file of files) {
      const earlier = this.#placing.get(file.path)
      if (earlier !== undefined) before.push(earlier)
      this.#placing.set(file.path, mine)
    }
    const held: number[] = []
    const retired: Spare[] = []
    try {
      const prepared = this.#prepare(files)
      let staged: StagedFile[]
      try {
        [staged] = await Promise.all([prepared, durable])
      } catch (err) {
        for (const file of await prepared.catch(() => [] as StagedFile[])) file.abort()
        throw err
      }
      if (before.length > 0) await Promise.all(before)
      try {
        await this.#placeFiles(staged, held, retired)
      } catch (err) {
        for (const file of staged) file.abort()
        throw err
      }
      renamed()
      try {
        // One folder (a save's file) is the usual case: its coalesced fsync without a set and a map.
        if (staged.length === 1) await this.#folderSync(path.dirname(staged[0]!.target)).sync()
        else await Promise.all([...new Set(staged.map(f => path.dirname(f.target)))].map(async dir => { await this.#folderSync(dir).sync() }))
      } catch (err) {
        this.#settleNamed(retired, false)
        throw err
      }
      this.#settleNamed(retired, true)
    } finally {
      renamed()
      closeInBackground(held)
      for (const file of files) if (this.#placing.get(file.path) === mine) this.#placing.delete(file.path)
    }
  }

  /**
   * Renames staged files over their targets, in order. A target whose file this instance placed
   * from the inode pool still has its pool name: the rename frees nothing (made synchronously), and
   * that name is retired as a spare (`retired`, to settle once the folder fsync is done). Any other
   * replaced file is held open (`held`, to close later: see `StagedFile.placeKeepingOld`).
   */
  async #placeFiles (staged: readonly StagedFile[], held: number[], retired: Spare[]): Promise<void> {
    for (const file of staged) {
      const before = this.#named.get(file.target)
      if (before !== undefined) {
        file.placeNow()
        // When the pool keeps no more spares, the name goes (and with it the file) once the rename
        // is durable: freed before, a power loss could bring the entry's old name back onto it.
        retired.push(this.#spares.retireNamed(before.file, before.size) ?? { file: before.file, since: Number.NaN, size: -1 })
      } else {
        const old = await file.placeKeepingOld()
        if (old !== null) held.push(old)
      }
      if (file.named === null) this.#named.delete(file.target)
      else {
        if (this.#named.size >= 16_384) this.#named.clear()
        this.#named.set(file.target, { file: file.named, size: file.size })
      }
    }
  }

  /**
   * Settles the pool names of replaced entry files once their folders' fsync returned: spares from
   * now on (after the reuse delay), or, for those the full pool did not take (`size` -1), removed
   * (which frees the file); when the fsync failed, nothing is reused or removed (the next start
   * adopts them).
   */
  #settleNamed (retired: Spare[], durable: boolean): void {
    const dropped = retired.filter(r => r.size < 0)
    this.#spares.settle(retired.filter(r => r.size >= 0), durable, Date.now())
    if (!durable) return
    for (const r of dropped) {
      this.#spares.forget()
      unlinkInBackground(r.file)
    }
  }

  #folderSync (dir: string): CoalescedSync {
    let sync = this.#folderSyncs.get(dir)
    if (sync === undefined) {
      if (this.#folderSyncs.size >= 4096) this.#folderSyncs.clear()
      sync = CoalescedSync.folder(dir)
      this.#folderSyncs.set(dir, sync)
    }
    return sync
  }

  #enqueue (jobs: Job[], first: boolean): void {
    if (jobs.length === 0) return
    if (first) this.#queue.unshift(...jobs)
    else this.#queue.push(...jobs)
    if (!this.#draining) void this.#drain()
  }

  /**
   * Starts groups one after the other: a group is formed from the queue once the group before it
   * has built its commits and made its pack durable (`#stage`), so saves that arrive meanwhile ride
   * in the next group, built on the commits of the one in flight, whose fsync rounds it overlaps.
   */
  async #drain (): Promise<void> {
    this.#draining = true
    try {
      while (this.#queue.length > 0) {
        // Jobs submitted in the same tick (one request saving several refs) share the group.
        await null
        const jobs = this.#queue
        this.#queue = []
        const prev = this.#last
        const prevRefsDone = this.#lastRefsDone
        const state = new GroupState()
        this.#last = state
        this.#lastRefsDone = false
        void state.refsDone.then(() => { if (this.#last === state) this.#lastRefsDone = true })
        let staged: Staged | null = null
        try {
          staged = await this.#stage(jobs, state, prevRefsDone)
        } catch (err) {
          for (const job of jobs) fail(job, err)
        }
        // Whatever happens there settles both of the state's promises: later groups wait for them.
        void this.#complete(jobs, staged, prev, state).finally(() => { state.markRefsDone(); state.markPlaced() })
        // The saves queued meanwhile form the next group at once only when they are at least two and
        // at least half as many as this group: a group costs several saves' own CPU, so a lone save
        // waits until this group's refs moved and takes along whatever arrived by then (as before the
        // pipeline; forming a group for each lone save made a chain of groups of one).
        if (this.#queue.length < Math.max(2, Math.ceil(jobs.length / 2))) await state.refsDone
      }
    } finally {
      this.#draining = false
    }
  }

  /**
   * The part of a group that does not wait for the group before it: waits for the jobs' files,
   * builds one commit per ref (on the ref's value, or on the commit of the group in flight), writes
   * the pack and fsyncs it, places it and fsyncs the pack directory. When no group is in flight
   * any more, it also takes the ref locks now and fsyncs them in the pack's round.
   */
  async #stage (all: Job[], owner: object, lockNow: boolean): Promise<Staged> {
    // The jobs' files (written and fsynced since their submit) are awaited in the pack's fsync round,
    // not before building: the last save of a group no longer makes the commit wait for its fsync.
    // A job that failed meanwhile (its files are then gone) makes the group rebuild without it below.
    const filesFailed = new Set<Job>()
    const filesReady = Promise.all(all.map(async job => {
      try {
        const files = await job.files
        // Failed meanwhile (its update function threw, or the group did): its files go.
        if (job.settled) for (const file of files) file.abort()
        else job.staged = files
      } catch (err) {
        filesFailed.add(job)
        fail(job, err)
      }
    }))
    const jobs = all.filter(j => !j.settled)
    // The pack's files are created while the commits are built (see PackStore.openTemporaries).
    const temporaries = jobs.some(j => j.source !== null) ? this.packs.openTemporaries() : null
    // Handled where it is awaited (stage) or discarded; this only keeps it from counting as unhandled first.
    temporaries?.catch(() => {})
    const batch = new ObjectBatch()
    const commits: RefCommit[] = []
    const bySource = new Map<RefSource, Job[]>()
    for (const job of jobs) {
      if (job.source === null) continue
      const list = bySource.get(job.source) ?? []
      list.push(job)
      bySource.set(job.source, list)
    }
    // Refs in name order: two instances locking several refs never wait on each other in a cycle.
    for (const [source, sourceJobs] of [...bySource].sort((a, b) => a[0].ref < b[0].ref ? -1 : 1)) {
      let head: string | null
      let built: { commit: string | null, failed: Map<number, unknown> }
      try {
        // On the commit of a group still in flight (its objects are readable, see PackStore.stage);
        // if that one does not land, the compare-and-swap refuses this one and its jobs are rebuilt.
        const pending = this.#pending.get(source.ref)
        head = pending !== undefined ? pending.commit : await readRef(this.gitDir, source.ref)
        built = await source.build(head, sourceJobs.map(j => j.updates), batch)
      } catch (err) {
        for (const job of sourceJobs) fail(job, err)
        continue
      }
      const kept = sourceJobs.filter((job, i) => {
        if (!built.failed.has(i)) return true
        fail(job, built.failed.get(i))
        return false
      })
      if (built.commit !== null) commits.push({ source, head, commit: built.commit, jobs: kept, lock: null })
      // Nothing changed on the ref: those jobs only place their files.
      else for (const job of kept) job.source = null
    }

    let pack: StagedPack | null = null
    try {
      // `stage` owns the temporary files from here on (also when it fails).
      if (batch.objects.length > 0) pack = await this.packs.stage(batch.objects, temporaries ?? undefined)
      else if (temporaries !== null) this.packs.discard(temporaries)
      // Later groups build on these commits from now on (their objects readable meanwhile).
      for (const c of commits) this.#pending.set(c.source.ref, { commit: c.commit, owner })
      if (lockNow) await this.#lock(commits)
      await Promise.all([
        filesReady,
        syncFiles(pack?.files ?? []),
        ...commits.flatMap(c => c.lock === null ? [] : [c.lock.sync()])
      ])
      // A job whose files failed is in a commit: that commit must not land. Rare (a full disk, a
      // folder made unwritable): the group is dropped and its other jobs rebuilt in the next one.
      if (commits.some(c => c.jobs.some(j => filesFailed.has(j)))) throw new FilesFailed()
      if (pack !== null) await pack.place()
    } catch (err) {
      await filesReady
      pack?.abort()
      for (const c of commits) {
        c.lock?.release()
        this.#forget(c.source.ref, owner)
      }
      if (err instanceof FilesFailed) this.#enqueue(all.filter(j => !j.settled), true)
      else for (const job of jobs) fail(job, err)
      return { commits: [], placing: [], lockedEarly: lockNow }
    }
    return { commits, placing: jobs, lockedEarly: lockNow }
  }

  /** Takes each commit's ref lock (in ref name order) and writes the new value into it. */
  async #lock (commits: RefCommit[]): Promise<void> {
    for (const c of commits) {
      if (c.jobs.every(j => j.settled)) continue
      try {
        const dir = path.dirname(path.join(this.gitDir, c.source.ref))
        c.lock = await lockRef(this.gitDir, c.source.ref, c.commit, () => this.#spareFile(dir, 0))
      } catch (err) {
        // Somebody else keeps the ref busy: the request may be retried later (503).
        const refused = err instanceof RefLockedError ? new StorageUnavailableError(err.message, { ref: c.source.ref }) : err
        for (const job of c.jobs) fail(job, refused)
      }
    }
  }

  /**
   * A spare inode for a new file of `dir`, opened for writing, or null.
   * @param keep leave this many spares in the pool (entry files leave some for the ref locks, which
   *   allocate no inode with one: the replaced ref file is retired at each group, one per lock)
   */
  #spareFile (dir: string, keep: number): SpareFile | null {
    const spare = this.#spares.take(dir, Date.now(), keep)
    if (spare === null) return null
    // The lock takes the spare's inode and drops its pool name (or the spare is gone).
    this.#spares.forget()
    const fd = openSpare(spare)
    return fd === null ? null : { file: spare.file, fd }
  }

  /** Drops a ref's pending head when it is the one `owner` built (it did not land). */
  #forget (ref: string, owner: object): void {
    if (this.#pending.get(ref)?.owner === owner) this.#pending.delete(ref)
  }

  /**
   * The part of a group that follows the group before it: once that one's refs moved (and its
   * locks are released), takes the ref locks (unless taken early) and fsyncs them, compares and
   * swaps each ref; then finishes (refs' directories fsynced, files placed after the previous
   * group's, their directories fsynced, jobs resolved).
   */
  async #complete (all: Job[], staged: Staged | null, prev: GroupState, owner: GroupState): Promise<void> {
    let landed: RefCommit[] = []
    let placing: Job[] = []
    try {
      await prev.refsDone
      if (staged !== null) ({ landed, placing } = await this.#land(staged, owner))
    } catch (err) {
      for (const job of all) fail(job, err)
    } finally {
      // The next group may take the locks now.
      owner.markRefsDone()
    }
    await this.#finish(landed, placing, prev, owner)
  }

  /** Locks (when not done yet), compares and swaps the refs; conflicted jobs go back to the queue. */
  async #land (staged: Staged, owner: object): Promise<{ landed: RefCommit[], placing: Job[] }> {
    const { commits } = staged
    if (!staged.lockedEarly) {
      try {
        await this.#lock(commits)
        await Promise.all(commits.flatMap(c => c.lock === null ? [] : [c.lock.sync()]))
      } catch (err) {
        for (const c of commits) {
          c.lock?.release()
          this.#forget(c.source.ref, owner)
          for (const job of c.jobs) fail(job, err)
        }
        return { landed: [], placing: staged.placing.filter(j => !j.settled) }
      }
    }
    const again: Job[] = []
    const landed: RefCommit[] = []
    for (const c of commits) {
      const lock = c.lock
      if (lock === null) { this.#forget(c.source.ref, owner); continue }
      try {
        await lock.commit(c.head, file => {
          c.spare = this.#spares.retire(file)
          return c.spare !== null
        })
        landed.push(c)
        for (const job of c.jobs) job.landed = { commit: c.commit, parent: c.head }
        // The ref holds it now: reading the ref gives the same.
        this.#forget(c.source.ref, owner)
      } catch (err) {
        // Groups after this one that built on its commit are refused by their own comparison.
        this.#pending.delete(c.source.ref)
        if (!(err instanceof RefConflictError)) { for (const job of c.jobs) fail(job, err); continue }
        // An outside writer moved the ref (or the group this one built on did not land): rebuild
        // these jobs on its current value in a later group.
        for (const job of c.jobs) {
          if (++job.attempts >= MAX_ATTEMPTS) fail(job, new StorageUnavailableError(`${c.source.ref} keeps changing under us`, { ref: c.source.ref }))
          else again.push(job)
        }
      } finally {
        lock.release()
      }
    }
    const retrying = new Set(again)
    this.#enqueue(again.filter(j => !j.settled), true)
    return { landed, placing: staged.placing.filter(j => !j.settled && !retrying.has(j)) }
  }

  /**
   * Makes the landed ref updates durable, then (after the previous group's files, so two groups
   * replacing one file land in order) places the jobs' files and resolves them.
   */
  async #finish (landed: RefCommit[], placing: Job[], prev: GroupState, owner: GroupState): Promise<void> {
    const refSpares = landed.map(c => c.spare ?? null)
    try {
      await syncDirectories(landed.map(c => c.lock!.dir))
      this.#spares.settle(refSpares, true, Date.now())
    } catch (err) {
      this.#spares.settle(refSpares, false, Date.now())
      for (const c of landed) for (const job of c.jobs) fail(job, err)
    }
    await prev.placed
    const dirs: string[] = []
    // An entry file's inode is not kept as a spare: linking it into the pool changes its ctime, part
    // of the entry's signature, so a kill between that link and the rename would make the unchanged
    // file look edited from outside (a revision of its own at the next start). Ref files only. The
    // replaced files are held open across the rename instead and closed (freed) once the jobs resolved.
    const held: number[] = []
    const retired: Spare[] = []
    await Promise.all(placing.filter(j => !j.settled).map(async job => {
      try {
        await this.#placeFiles(job.staged, held, retired)
        for (const file of job.staged) dirs.push(path.dirname(file.target))
      } catch (err) {
        fail(job, err)
      }
    }))
    owner.markPlaced()
    try {
      await syncDirectories(dirs)
      this.#settleNamed(retired, true)
      for (const job of placing) done(job)
    } catch (err) {
      this.#settleNamed(retired, false)
      for (const job of placing) fail(job, err)
    } finally {
      closeInBackground(held)
    }
  }

  /** Writes and fsyncs files under temporary names (all removed again when one fails). */
  async #prepare (files: readonly FileWrite[]): Promise<StagedFile[]> {
    if (files.length === 0) return []
    if (files.length === 1) {
      // A save's one file: no settling of a list (see below for the general case).
      const file = await this.#stageOne(files[0]!)
      try {
        await file.sync()
      } catch (err) {
        file.abort()
        throw err
      }
      return [file]
    }
    const results = await Promise.allSettled(files.map(async f => await this.#stageOne(f)))
    const staged = results.flatMap(r => r.status === 'fulfilled' ? [r.value] : [])
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    try {
      if (failed !== undefined) throw failed.reason
      await syncFiles(staged)
      return staged
    } catch (err) {
      for (const file of staged) file.abort()
      throw err
    }
  }

  /** Writes one file under a temporary name next to its target (not fsynced yet). */
  async #stageOne (f: FileWrite): Promise<StagedFile> {
    // Next to the target: its folder and name cut at the last separator (the path is absolute and
    // normalized by its caller), without path.join's normalizing of the whole string again.
    const cut = f.path.lastIndexOf(path.sep)
    const tmp = cut > 0
      ? `${f.path.slice(0, cut + 1)}${this.#tmpPrefix}${this.#tmpCounter++}-${f.path.slice(cut + 1)}`
      : path.join(path.dirname(f.path), `${this.#tmpPrefix}${this.#tmpCounter++}-${path.basename(f.path)}`)
    // Written in the inode pool and linked next to the target (see inode-pool.ts); else as before,
    // a new file next to it (a spare is no longer renamed out of the pool: a power loss on a
    // journal-less file system could keep its pool name beside the entry's with one link counted).
    return await StagedFile.createNamed(f.path, f.data, { tmp, pool: this.#spares, keep: SPARES_FOR_LOCKS, learn: this.#learn }) ??
      await StagedFile.create(f.path, f.data, { tmp, learn: this.#learn })
  }
}

/** A group's commit included a job whose files failed: the group is rebuilt without it. */
class FilesFailed extends Error {}

/** What `#stage` hands to `#complete`. */
interface Staged {
  commits: RefCommit[]
  /** The jobs still alive (their files to place once their ref landed). */
  placing: Job[]
  /** Whether the locks were taken (and fsynced) with the pack. */
  lockedEarly: boolean
}

/** Removes a file's name through the thread pool, without waiting (freeing it may wait for the device). */
function unlinkInBackground (file: string): void {
  fs.unlink(file, () => {})
}

function done (job: Job): void {
  if (job.settled) return
  job.settled = true
  job.resolve(job.landed)
}

function fail (job: Job, err: unknown): void {
  if (job.settled) return
  job.settled = true
  for (const file of job.staged) {
    try { file.abort() } catch {}
  }
  job.reject(err)
}
