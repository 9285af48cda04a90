/**
 * The search process: builds one collection's full-text segment in a child process and writes it
 * to its file (search-snapshot.ts), for `writeSegmentFile` (segment-reader.ts). Reading and
 * tokenizing 100,000 files leaves memory behind in the process that does it (a worker thread's
 * freed buffers stay in glibc's arenas, ~40 MB at 100,000 entries); a process gives all of it back
 * when it exits. The server then loads the file as a restart does.
 *
 * Protocol (IPC, JSON): the parent sends `start`, then `rows` in chunks, then `end`; the child
 * builds (with `reuse`, from the segment file already at the place and the changed entries only:
 * merge-segment.ts), writes the file atomically with the build's token in its header, answers `done` (or
 * `failed`) and exits. It exits at once (code 1) if the parent goes away first: nothing is written
 * for a server that is gone.
 */
import type { EntryFormat } from '../content/formats.js'
import { buildSegment } from './build-segment.js'
import { mergeSegment } from './merge-segment.js'
import { SearchSnapshot, type SnapshotPlace } from './search-snapshot.js'
import { SegmentFileChanged } from './segment-file.js'

/** The first message: what to build and where to write it. */
export interface SegmentProcessStart {
  kind: 'start'
  repoRealDir: string
  format: EntryFormat
  titleField: string | null
  place: SnapshotPlace
  /** The token written into the file's header (the parent reads back only that file). */
  build: string
  /**
   * Take the documents of the segment file now at `place` whose recorded signature is their
   * entry's now, and read only the other entries (merge-segment.ts); a file in doubt or missing:
   * read every entry.
   */
  reuse?: boolean
}

/** A chunk of the entries: ids, absolute files and the signature to record for each ('' when not to be trusted). */
export interface SegmentProcessRows {
  kind: 'rows'
  ids: string[]
  files: string[]
  sigs: string[]
}

/** What the parent sends. */
export type SegmentProcessMessage = SegmentProcessStart | SegmentProcessRows | { kind: 'end' }

/** What the child answers (`reused`: documents taken from the previous segment file). */
export type SegmentProcessAnswer = { kind: 'done', reused: number } | { kind: 'failed', message: string }

/**
 * Runs the child's side: receives the job, builds, writes, answers, exits.
 */
export function serveSegmentBuild (): void {
  const send = process.send?.bind(process)
  if (send === undefined) return
  let start: SegmentProcessStart | null = null
  const files: Array<[string, string]> = []
  const sigs: string[] = []
  let finished = false
  // The parent gone (or it closed the channel to cancel): stop without writing. Reading the files
  // hardly lets this event loop turn (small files are read synchronously), so the build also checks
  // whether this process was handed to another parent, and so does the write before its rename.
  process.once('disconnect', () => { if (!finished) process.exit(1) })
  const parent = process.ppid
  const orphaned = (): void => { if (process.ppid !== parent) process.exit(1) }
  const answer = (message: SegmentProcessAnswer, code: number): void => {
    finished = true
    send(message, undefined, {}, () => { process.exit(code) })
  }
  const run = async (job: SegmentProcessStart): Promise<number> => {
    const snapshot = new SearchSnapshot(job.place)
    const segmentJob = { repoRealDir: job.repoRealDir, files, format: job.format, titleField: job.titleField }
    const previous = job.reuse === true ? await snapshot.read() : null
    // The previous file replaced between its check and the merge's reads (SegmentFileChanged): every file is read.
    const merged = previous !== null ? await mergeSegment(segmentJob, sigs, previous, orphaned).catch((err: unknown) => { if (err instanceof SegmentFileChanged) return null; throw err }) : null
    const built = merged ?? { ...await buildSegment(segmentJob, orphaned), reused: 0 }
    const ids = Array.from(built.order, i => (files[i] as [string, string])[0])
    const kept = Array.from(built.order, i => sigs[i] as string)
    orphaned()
    await snapshot.write({ segment: built.segment, ids, sigs: kept }, job.build, orphaned)
    return built.reused
  }
  process.on('message', (m: SegmentProcessMessage) => {
    if (m.kind === 'start') start = m
    else if (m.kind === 'rows') {
      for (let i = 0; i < m.ids.length; i++) files.push([m.ids[i] as string, m.files[i] as string])
      sigs.push(...m.sigs)
    } else if (m.kind === 'end') {
      if (start === null || files.length !== sigs.length) { answer({ kind: 'failed', message: 'incomplete job' }, 1); return }
      run(start).then(reused => { answer({ kind: 'done', reused }, 0) }, (err: Error) => { answer({ kind: 'failed', message: String(err?.message ?? err) }, 1) })
    }
  })
}
