/**
 * The packs of one git directory: writes a whole group commit (blobs, trees, commit) as one pack,
 * reads whole (non-delta) objects from any pack, and merges the small packs this process wrote.
 *
 * Why packs: every loose object is a file, and creating a file is the dearest thing a save does
 * (0.05-1 ms of kernel time each on the CI machine's journal-less ext4, which skips recently deleted
 * inodes one by one). A history commit of one save is five objects; as one pack it is two files
 * (`.idx` and `.pack`), whatever the number of objects. Git reads these packs like its own, and
 * thousands of loose objects no longer pile up towards `git gc --auto`.
 *
 * Writes are atomic and durable: both files are written and fsynced under temporary names
 * (`tmp_pack_*`, which git's own gc removes when stale) and renamed, the pack last, so a crash never
 * leaves a pack without its index (an fsck error; an index without its pack is skipped by git and by
 * our listing); the directory is fsynced before any ref may point at them.
 * Merging keeps this process's pack count low (tiered: MERGE_AT packs of one size tier become one
 * of the next, their entries copied as they are); merged-away packs are removed only after the
 * merged pack is in place, so every object is always in some pack.
 */
import fs from 'node:fs'
import { readdir, rm, stat, mkdir, readFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import path from 'node:path'
import { StagedFile, createFile, syncDirectory, syncFiles } from './atomic-write.js'
import { GroupCommit } from './group-commit.js'
import { buildPack, buildPackOf, decodeEntry, entriesOf, PackIndex, PackIndexError, type BuiltPack, type ObjectType, type PackEntry, type PackObject } from './pack-file.js'

const unlink = promisify(fs.unlink)

/** Closes and removes temporary files that were not used. */
function discardFiles (files: ReadonlyArray<{ file: string, fd: number }>): void {
  for (const f of files) {
    try { fs.closeSync(f.fd) } catch {}
    fs.rmSync(f.file, { force: true })
  }
}

/** Packs up to this size are read synchronously when merged (a page-cache hit of a few KB). */
const READ_SYNC_BYTES = 256 * 1024

/**
 * A pack file this process wrote, read for a merge: small ones synchronously (fs/promises'
 * readFile is four thread-pool round trips: open, fstat, read, close), larger ones through the pool.
 */
async function readPackFile (file: string): Promise<Buffer> {
  const size = fs.statSync(file).size
  return size <= READ_SYNC_BYTES ? fs.readFileSync(file) : await readFile(file)
}

/**
 * Removes a file, through the thread pool (freeing its blocks may wait for the device), and
 * without `rm`'s lstat first; a file already gone is fine.
 */
async function unlinkIfPresent (file: string): Promise<void> {
  try {
    await unlink(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}

/** Merge once this process has written this many packs of one size tier. */
const MERGE_AT = 8
/** Our temporary files (git's own gc also removes stale `tmp_pack_*` files). */
const TMP_PREFIX = 'tmp_pack_cms_'

/** Two empty temporary files (the pack's and its index's) created ahead, open for writing. */
export type PackTemporaries = Promise<Array<{ file: string, fd: number }>>

/**
 * A pack and its index written under temporary names, not yet durable nor in place: a group
 * commit fsyncs `files` together with its other files, then calls `place()`.
 */
export interface StagedPack {
  /** The temporary `.pack` and `.idx` files, to fsync. */
  files: StagedFile[]
  /**
   * Renames the (synced) index, then the pack, into place, fsyncs the pack directory and makes the
   * pack readable here.
   * @returns resolves once both are durable under their names
   */
  place: () => Promise<void>
  /** Removes the temporary files (a failed batch). */
  abort: () => void
}

interface LoadedPack {
  name: string
  index: PackIndex
  packSize: number
}

/** One pack this process wrote, for merging. */
interface OwnPack {
  name: string
  objects: number
  /** Its entries, kept for small packs: a merge then reads nothing back from disk. */
  entries?: readonly PackEntry[]
}

/** Packs up to this size keep their entries in memory until merged (at most ~2 MB in all). */
const KEEP_ENTRIES_BYTES = 256 * 1024

function ownPack (built: BuiltPack, objects: number): OwnPack {
  return built.pack.length <= KEEP_ENTRIES_BYTES ? { name: built.name, objects, entries: built.entries } : { name: built.name, objects }
}

/** Reads and writes the packs of one `.git` directory. */
export class PackStore {
  /** The group commit of this git directory: every ref store sharing these packs commits through it. */
  readonly group: GroupCommit
  private readonly packDir: string
  private readonly tmpPrefix = `${TMP_PREFIX}${randomBytes(6).toString('hex')}_`
  private tmpCounter = 0
  /** Loaded indexes by pack name; refreshed when a lookup misses and the directory changed. */
  private packs = new Map<string, LoadedPack>()
  private listedMtime = -1
  private readonly own: OwnPack[] = []
  private merging: Promise<void> | null = null
  private dirReady = false
  /** Objects of staged packs not yet in place, by id. */
  private readonly inFlight = new Map<string, PackObject>()

  /** @param gitDir the `.git` directory */
  constructor (gitDir: string) {
    this.packDir = path.join(gitDir, 'objects', 'pack')
    this.group = new GroupCommit(gitDir, this)
  }

  /**
   * Writes objects as one new pack (atomically, index last).
   * @param objects whole objects (at least one)
   * @returns resolves once the pack is durable and readable
   */
  async write (objects: readonly PackObject[]): Promise<void> {
    const staged = await this.stage(objects)
    try {
      await syncFiles(staged.files)
    } catch (err) {
      staged.abort()
      throw err
    }
    await staged.place()
  }

  /**
   * Creates the two temporary files of a pack ahead of need (`createFile`: synchronously while
   * that is cheap, else through the thread pool): a group commit asks for them before it builds its
   * commits, so a slow create (0.6-0.8 ms in a pack directory whose block group had many recently
   * freed inodes, on journal-less ext4) overlaps the build instead of following it. Hand them to
   * `stage`, or to `discard` when there is no pack.
   * @returns the files, once created
   */
  async openTemporaries (): PackTemporaries {
    await this.ensureDir()
    const results = await Promise.allSettled([this.newTemporary(), this.newTemporary()])
    const files = results.flatMap(r => r.status === 'fulfilled' ? [r.value] : [])
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed !== undefined) {
      discardFiles(files)
      throw failed.reason
    }
    return files
  }

  /**
   * Removes temporary files `openTemporaries` made that no pack needed.
   * @param temporaries what `openTemporaries` returned
   */
  discard (temporaries: PackTemporaries): void {
    temporaries.then(discardFiles, () => {})
  }

  /**
   * Writes objects as one new pack under temporary names; the caller fsyncs its files (with
   * others of the same group commit) and then places it.
   * @param objects whole objects (at least one)
   * @param temporaries files from `openTemporaries` to write into (this call owns them from now
   *   on, also when it fails); else they are created here
   * @returns the staged pack
   */
  async stage (objects: readonly PackObject[], temporaries?: PackTemporaries): Promise<StagedPack> {
    let built: BuiltPack
    try {
      built = buildPack(objects)
    } catch (err) {
      if (temporaries !== undefined) this.discard(temporaries)
      throw err
    }
    const files = await this.stageFiles(built, temporaries)
    // Readable here from now on: the next group commit builds on this one's commits before this
    // pack is in place (a ref never points at them before it is: see group-commit.ts).
    for (const o of objects) this.inFlight.set(o.oid, o)
    const forget = (): void => { for (const o of objects) if (this.inFlight.get(o.oid) === o) this.inFlight.delete(o.oid) }
    return {
      files,
      place: async () => {
        try {
          await this.place(files)
        } catch (err) {
          forget()
          throw err
        }
        this.loaded(built)
        forget()
      },
      abort: () => {
        forget()
        for (const f of files) f.abort()
      }
    }
  }

  /** Makes a pack this process wrote readable, and merges packs of a full tier in the background. */
  private loaded (built: BuiltPack): void {
    const index = new PackIndex(built.idx)
    this.packs.set(built.name, { name: built.name, index, packSize: built.pack.length })
    this.own.push(ownPack(built, index.count))
    if (this.fullTier() !== null && this.merging === null) {
      // In the background: no save waits for a merge. Each merge turns MERGE_AT packs into one, so
      // the loop ends. A merge that fails (the repository went away, a disk error) leaves every
      // pack as it was, which is always safe; the next write tries again.
      this.merging = (async () => {
        for (let tier = this.fullTier(); tier !== null; tier = this.fullTier()) await this.mergeOwn(tier)
      })()
        .catch(() => {})
        .finally(() => { this.merging = null })
    }
  }

  /**
   * Removes the temporary files of packs that a killed process was writing (ours only, by prefix)
   * and pack indexes left without their pack (a kill between placing an index and its pack, or
   * between removing a merged pack and its index: `git fsck` reports such an index as an error; git
   * itself places the pack before its index, so it never leaves one), and lets the group commit take
   * over the spare inodes it left (see inode-pool.ts). Call it at start-up while holding the
   * instance lock.
   * @returns the number of files removed
   */
  async sweepTemporary (): Promise<number> {
    await this.group.adoptSpares()
    let names: string[]
    try {
      names = await readdir(this.packDir)
    } catch {
      return 0
    }
    const present = new Set(names)
    const orphans = names.filter(n => /^pack-[0-9a-f]{40}\.idx$/.test(n) && !present.has(`${n.slice(0, -4)}.pack`))
    const stale = [...names.filter(n => n.startsWith(TMP_PREFIX)), ...orphans]
    await Promise.all(stale.map(async n => { await rm(path.join(this.packDir, n), { force: true }) }))
    return stale.length
  }

  /**
   * Waits for a merge in progress (before the repository is closed or removed).
   * @returns resolves when no merge runs
   */
  async idle (): Promise<void> {
    while (this.merging !== null) await this.merging
  }

  /**
   * Reads a whole object from whichever pack holds it.
   * @param oid 40-hex object id
   * @returns the object; 'delta' when it is stored as a delta; null when no pack holds it
   */
  async read (oid: string): Promise<{ type: ObjectType, content: Buffer } | 'delta' | null> {
    const staged = this.inFlight.get(oid)
    if (staged !== undefined) return { type: staged.type, content: staged.content }
    for (let attempt = 0; attempt < 2; attempt++) {
      const found = this.find(oid)
      if (found !== null) {
        try {
          return decodeEntry(await this.readEntry(found.pack, found.offset))
        } catch (err) {
          // The pack was removed meanwhile (a merge here, `git gc` elsewhere): list again.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
          this.packs.delete(found.pack.name)
          this.listedMtime = -1
        }
      }
      if (!(await this.refresh())) return null
    }
    return null
  }

  private find (oid: string): { pack: LoadedPack, offset: number } | null {
    const key = Buffer.from(oid, 'hex')
    for (const pack of this.packs.values()) {
      const offset = pack.index.offsetOf(key)
      if (offset >= 0) return { pack, offset }
    }
    return null
  }

  /**
   * One entry's bytes, read synchronously: a read of a few KiB at a known offset is a page-cache
   * hit costing microseconds, less than the thread-pool round trips of open, read and close.
   */
  private async readEntry (pack: LoadedPack, offset: number): Promise<Buffer> {
    const end = pack.index.endOf(offset, pack.packSize)
    const fd = fs.openSync(path.join(this.packDir, `${pack.name}.pack`), 'r')
    try {
      const buf = Buffer.alloc(end - offset)
      const bytesRead = fs.readSync(fd, buf, 0, buf.length, offset)
      if (bytesRead !== buf.length) throw new Error(`Pack ${pack.name} is truncated`)
      return buf
    } finally {
      fs.closeSync(fd)
    }
  }

  /** Loads indexes of packs that appeared and forgets vanished ones; false when nothing changed. */
  private async refresh (): Promise<boolean> {
    let mtime: number
    try {
      mtime = (await stat(this.packDir)).mtimeMs
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw err
    }
    if (mtime === this.listedMtime) return false
    this.listedMtime = mtime
    const names = new Set((await readdir(this.packDir)).filter(f => f.endsWith('.idx')).map(f => f.slice(0, -4)))
    const next = new Map<string, LoadedPack>()
    for (const name of names) {
      const known = this.packs.get(name)
      if (known !== undefined) { next.set(name, known); continue }
      try {
        const [idx, packStat] = await Promise.all([readFile(path.join(this.packDir, `${name}.idx`)), stat(path.join(this.packDir, `${name}.pack`))])
        next.set(name, { name, index: new PackIndex(idx), packSize: packStat.size })
      } catch (err) {
        // Removed between listing and reading, or an index we cannot read (isomorphic-git may).
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof PackIndexError)) throw err
      }
    }
    this.packs = next
    return true
  }

  /**
   * Merges MERGE_AT packs this process wrote that are of one size tier (tier n: fewer than
   * MERGE_AT^(n+1) objects) into one pack of the next tier, copying their entries as they are, then
   * removes them. An object is so rewritten once per tier: log8 of the number of objects.
   */
  private async mergeOwn (tier: OwnPack[]): Promise<void> {
    const chosen = tier.slice(0, MERGE_AT)
    const entries: PackEntry[] = []
    const merged = new Set<string>()
    for (const own of chosen) {
      merged.add(own.name)
      // A small pack's entries are still in memory: exactly the bytes written (when `git gc` repacked
      // it meanwhile, its objects are also in git's pack: a duplicate, harmless).
      if (own.entries !== undefined) {
        entries.push(...own.entries)
        continue
      }
      // Both files from disk, not the loaded indexes: a listing taken just before this pack was
      // renamed into place may have dropped it from those, and a pack is removed below only once
      // its entries are in the merged one.
      let buf: Buffer
      let index: PackIndex
      try {
        buf = await readPackFile(path.join(this.packDir, `${own.name}.pack`))
        index = new PackIndex(await readPackFile(path.join(this.packDir, `${own.name}.idx`)))
      } catch (err) {
        // `git gc` repacked it meanwhile: its objects are in git's pack now, nothing to remove.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') { merged.delete(own.name); continue }
        throw err
      }
      const copied = entriesOf(buf, index)
      // Not one of our whole-object packs after all: leave it alone.
      if (copied === null) { merged.delete(own.name); continue }
      entries.push(...copied)
    }
    for (let i = this.own.length - 1; i >= 0; i--) if (chosen.includes(this.own[i]!)) this.own.splice(i, 1)
    if (entries.length > 0) {
      const built = buildPackOf(entries)
      const files = await this.stageFiles(built)
      try {
        await syncFiles(files)
      } catch (err) {
        for (const f of files) f.abort()
        throw err
      }
      await this.place(files)
      const index = new PackIndex(built.idx)
      this.packs.set(built.name, { name: built.name, index, packSize: built.pack.length })
      this.own.push(ownPack(built, index.count))
      merged.delete(built.name)
    }
    for (const name of merged) {
      this.packs.delete(name)
      // The pack first: git skips an index without its pack (a warning; gc removes it), while a pack
      // without its index is an fsck error, so a kill between the two must leave only an index.
      await unlinkIfPresent(path.join(this.packDir, `${name}.pack`))
      await unlinkIfPresent(path.join(this.packDir, `${name}.idx`))
    }
  }

  /** The packs of the lowest tier that has MERGE_AT of them, or null. */
  private fullTier (): OwnPack[] | null {
    const tiers = new Map<number, OwnPack[]>()
    for (const own of this.own) {
      const tier = Math.floor(Math.log(Math.max(1, own.objects)) / Math.log(MERGE_AT))
      const packs = tiers.get(tier) ?? []
      packs.push(own)
      tiers.set(tier, packs)
    }
    return [...tiers].filter(([, packs]) => packs.length >= MERGE_AT).sort((x, y) => x[0] - y[0])[0]?.[1] ?? null
  }

  /** Creates the pack directory (durably) when it is missing. */
  private async ensureDir (): Promise<void> {
    if (!this.dirReady) {
      try {
        await stat(this.packDir)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
        await mkdir(this.packDir, { recursive: true })
        // The new directory's own entry in objects/ must be durable too.
        await syncDirectory(path.dirname(this.packDir))
      }
      this.dirReady = true
    }
  }

  /** A new empty temporary file of the pack directory, created through the thread pool. */
  private async newTemporary (): Promise<{ file: string, fd: number }> {
    const file = path.join(this.packDir, `${this.tmpPrefix}${this.tmpCounter++}`)
    return { file, fd: await createFile(file, 0o444) }
  }

  /**
   * Writes a pack's two files under temporary names (the pack directory is created, durably, when
   * missing), into `temporaries` when given. Nothing is fsynced yet: see `place`.
   */
  private async stageFiles (built: BuiltPack, temporaries?: PackTemporaries): Promise<StagedFile[]> {
    if (temporaries !== undefined) {
      const [forPack, forIdx] = (await temporaries) as [{ file: string, fd: number }, { file: string, fd: number }]
      let pack: StagedFile
      try {
        pack = await StagedFile.create(path.join(this.packDir, `${built.name}.pack`), built.pack, { opened: forPack })
      } catch (err) {
        // StagedFile.create removed the file it failed on; the other one goes here.
        discardFiles([forIdx])
        throw err
      }
      try {
        return [pack, await StagedFile.create(path.join(this.packDir, `${built.name}.idx`), built.idx, { opened: forIdx })]
      } catch (err) {
        pack.abort()
        throw err
      }
    }
    await this.ensureDir()
    const tmp = (): string => path.join(this.packDir, `${this.tmpPrefix}${this.tmpCounter++}`)
    // Both at once, with `createFile`: on journal-less ext4 a new inode is looked for past every
    // recently deleted one of the directory's block group, and in the pack directory (merged packs
    // are deleted there) that measured 0.6-0.8 ms per file once a few thousand saves had run (20-40
    // µs on a fresh repository): then through the thread pool, not on the service thread.
    const results = await Promise.allSettled([
      StagedFile.create(path.join(this.packDir, `${built.name}.pack`), built.pack, { tmp: tmp(), mode: 0o444 }),
      StagedFile.create(path.join(this.packDir, `${built.name}.idx`), built.idx, { tmp: tmp(), mode: 0o444 })
    ])
    const files = results.flatMap(r => r.status === 'fulfilled' ? [r.value] : [])
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed !== undefined) {
      for (const f of files) f.abort()
      throw failed.reason
    }
    return files
  }

  /**
   * Renames a pack's synced files into place, the index first and after it the pack (a kill
   * between the two leaves an index without its pack, which git and our listing skip, never a pack
   * without its index, which git fsck reports), then fsyncs the directory once: when this resolves
   * both files are durable, so a ref updated after it never points into a pack that a power loss
   * could leave empty.
   */
  private async place (files: StagedFile[]): Promise<void> {
    const [pack, idx] = files as [StagedFile, StagedFile]
    try {
      // New names (a pack's name is its checksum): the renames free nothing, so they are made
      // synchronously.
      idx.placeNow()
      pack.placeNow()
    } catch (err) {
      for (const f of files) f.abort()
      throw err
    }
    await syncDirectory(this.packDir)
  }
}
