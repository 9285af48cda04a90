/**
 * One group commit for everything written to the git directory at the same time: the updates of
 * every ref (`refs/cms/history`, each editor's `refs/cms/drafts/<id>`) and the entry files that go
 * with them, so concurrent saves share one pack and one round of fsyncs.
 *
 * A job's files are written and fsynced under temporary names as soon as it is submitted (while
 * the group before it is still being written). Later jobs queue up and form the next group. A group:
 *   1. waits for its jobs' files;
 *   2. builds one commit per ref on the ref's current value, all objects into one pack;
 *   3. takes each ref's lock file and writes the new value into it (refs in name order);
 *   4. fsyncs the pack, its index and the lock files, all at once;
 *   5. renames the index and the pack into place and fsyncs the pack directory;
 *   6. compares each ref with the value its commit was built on (compare-and-swap, under its lock)
 *      and renames the lock onto it; from here on the next group may start (it builds on these
 *      values), while this one finishes: it fsyncs the refs' directories,
 *   7. renames the files of the jobs whose ref landed (or that had none) over their targets and
 *      fsyncs their directories; then each job resolves.
 * So nothing resolves before it is durable, a ref never points at objects that are not, and an
 * entry file is replaced only once the history snapshot of what it replaces is on its ref. When an
 * outside writer moved one ref meanwhile, only the jobs of that ref go into the next group (their
 * files stay written and synced); the other refs' jobs complete. An update function that throws
 * fails only its own job.
 */
import { readRef, lockRef, RefConflictError, RefLockedError, type RefLock } from './git-refs.js'
import { StagedFile, TEMP_PREFIX, syncDirectories, syncFiles } from './atomic-write.js'
import { ObjectBatch } from './object-batch.js'
import { InodePool, type FileIdentity, type Spare } from './inode-pool.js'
import type { PackStore, StagedPack } from './pack-store.js'
import { StorageUnavailableError } from '../errors.js'
import path from 'node:path'
import { randomBytes } from 'node:crypto'

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
  resolve: () => void
  reject: (err: unknown) => void
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

/** The group commit of one `.git` directory (one per instance, shared by its ref stores). */
export class GroupCommit {
  #queue: Job[] = []
  #draining = false
  /** Temporary names: a per-instance prefix and a counter (no random bytes per file). */
  readonly #tmpPrefix = `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-`
  #tmpCounter = 0
  /** Retired entry-file inodes, reused by later saves (replacing a file then frees nothing). */
  readonly #spares: InodePool

  /**
   * @param gitDir the `.git` directory
   * @param packs its packs
   */
  constructor (private readonly gitDir: string, private readonly packs: PackStore) {
    this.#spares = new InodePool(gitDir)
  }

  /**
   * Takes over the spare inodes a previous process left (at start-up, under the instance lock).
   * @returns resolves when done
   */
  async adoptSpares (): Promise<void> {
    await this.#spares.adopt()
  }

  /**
   * Applies updates to a ref and then replaces files, as part of the next group.
   * @param source the ref's store (null: files only)
   * @param updates the store's updates, applied in order (may run more than once when the ref moved)
   * @param files files replaced (atomically) once the ref update is durable
   * @returns resolves once everything is durable and in place
   */
  async submit (source: RefSource | null, updates: readonly unknown[], files: readonly FileWrite[] = []): Promise<void> {
    if ((source === null || updates.length === 0) && files.length === 0) return
    await new Promise<void>((resolve, reject) => {
      const job: Job = { source: updates.length === 0 ? null : source, updates, files: this.#prepare(files), staged: [], attempts: 0, settled: false, resolve, reject }
      // Handled when the group awaits it; this only keeps a failure from counting as unhandled first.
      job.files.catch(() => {})
      this.#queue.push(job)
      if (!this.#draining) void this.#drain()
    })
  }

  async #drain (): Promise<void> {
    this.#draining = true
    try {
      while (this.#queue.length > 0) {
        // Jobs submitted in the same tick (one request saving several refs) share the group.
        await null
        const jobs = this.#queue
        this.#queue = []
        try {
          const { again, finish } = await this.#run(jobs)
          this.#queue.unshift(...again)
          // The next group starts now; this one finishes meanwhile.
          finish.catch(err => { for (const job of jobs) fail(job, err) })
        } catch (err) {
          for (const job of jobs) fail(job, err)
        }
      }
    } finally {
      this.#draining = false
    }
  }

  /**
   * Writes one group up to its ref updates; `again` are the jobs to retry (their ref moved under
   * us), `finish` completes the others (directory fsyncs, files placed, jobs resolved).
   */
  async #run (all: Job[]): Promise<{ again: Job[], finish: Promise<void> }> {
    await Promise.all(all.map(async job => {
      try {
        job.staged = await job.files
      } catch (err) {
        fail(job, err)
      }
    }))
    let jobs = all.filter(j => !j.settled)
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
        head = await readRef(this.gitDir, source.ref)
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
    jobs = jobs.filter(j => !j.settled)

    let pack: StagedPack | null = null
    try {
      if (batch.objects.length > 0) pack = await this.packs.stage(batch.objects)
      for (const c of commits) {
        try {
          c.lock = await lockRef(this.gitDir, c.source.ref, c.commit)
        } catch (err) {
          // Somebody else keeps the ref busy: the request may be retried later (503).
          const refused = err instanceof RefLockedError ? new StorageUnavailableError(err.message, { ref: c.source.ref }) : err
          for (const job of c.jobs) fail(job, refused)
        }
      }
      await Promise.all([
        syncFiles(pack?.files ?? []),
        ...commits.flatMap(c => c.lock === null ? [] : [c.lock.sync()])
      ])
      if (pack !== null) await pack.place()
    } catch (err) {
      pack?.abort()
      for (const c of commits) c.lock?.release()
      for (const job of jobs) fail(job, err)
      return { again: [], finish: Promise.resolve() }
    }

    const again: Job[] = []
    const landed: RefCommit[] = []
    for (const c of commits) {
      const lock = c.lock
      if (lock === null) continue
      try {
        await lock.commit(c.head, file => { c.spare = this.#spares.retire(file) })
        landed.push(c)
      } catch (err) {
        if (!(err instanceof RefConflictError)) { for (const job of c.jobs) fail(job, err); continue }
        // An outside writer moved the ref: rebuild these jobs on its new value in the next group.
        for (const job of c.jobs) {
          if (++job.attempts >= MAX_ATTEMPTS) fail(job, new StorageUnavailableError(`${c.source.ref} keeps changing under us`, { ref: c.source.ref }))
          else again.push(job)
        }
      } finally {
        lock.release()
      }
    }
    const retrying = new Set(again)
    return { again, finish: this.#finish(landed, jobs.filter(j => !j.settled && !retrying.has(j))) }
  }

  /** Makes the landed ref updates durable, then places the jobs' files and resolves them. */
  async #finish (landed: RefCommit[], placing: Job[]): Promise<void> {
    const refSpares = landed.map(c => c.spare ?? null)
    try {
      await syncDirectories(landed.map(c => c.lock!.dir))
      this.#spares.settle(refSpares, true, Date.now())
    } catch (err) {
      this.#spares.settle(refSpares, false, Date.now())
      for (const c of landed) for (const job of c.jobs) fail(job, err)
    }
    const dirs: string[] = []
    // An entry file's inode is not kept as a spare: linking it into the pool changes its ctime, part
    // of the entry's signature, so a kill between that link and the rename would make the unchanged
    // file look edited from outside (a revision of its own at the next start). Ref files only.
    await Promise.all(placing.filter(j => !j.settled).map(async job => {
      try {
        await Promise.all(job.staged.map(async file => { await file.place() }))
        for (const file of job.staged) dirs.push(path.dirname(file.target))
      } catch (err) {
        fail(job, err)
      }
    }))
    try {
      await syncDirectories(dirs)
      for (const job of placing) done(job)
    } catch (err) {
      for (const job of placing) fail(job, err)
    }
  }

  /** Writes and fsyncs files under temporary names (all removed again when one fails). */
  async #prepare (files: readonly FileWrite[]): Promise<StagedFile[]> {
    if (files.length === 0) return []
    const results = await Promise.allSettled(files.map(async f => {
      const dir = path.dirname(f.path)
      const tmp = path.join(dir, `${this.#tmpPrefix}${this.#tmpCounter++}-${path.basename(f.path)}`)
      const learn = (identity: FileIdentity): void => { this.#spares.learn(identity) }
      return await StagedFile.create(f.path, f.data, { tmp, reuse: this.#spares.take(dir, Date.now()), learn })
    }))
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
}


function done (job: Job): void {
  if (job.settled) return
  job.settled = true
  job.resolve()
}

function fail (job: Job, err: unknown): void {
  if (job.settled) return
  job.settled = true
  for (const file of job.staged) {
    try { file.abort() } catch {}
  }
  job.reject(err)
}
