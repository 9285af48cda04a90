/**
 * Reads a collection's entry files and builds its full-text segment: in the index's search worker
 * (search-worker.ts) for a big collection, in the calling thread for a small one. Documents are
 * numbered in id order (the order a tie in rank falls back to).
 */
import type { EntryFormat } from '../content/formats.js'
import { readEntryFile } from '../storage/entry-file.js'
import { formatOfFile } from '../storage/entry-paths.js'
import { entryTerms } from './entry-terms.js'
import { SegmentBuilder, type SegmentData } from './search-segment.js'

/** What to read. */
export interface SegmentJob {
  repoRealDir: string
  /** `[id, absolute file]` of every entry. */
  files: Array<[string, string]>
  format: EntryFormat
  titleField: string | null
}

/** The segment, and which of the job's files each document is. */
export interface BuiltSegment {
  segment: SegmentData
  /** Document i is the job's file `order[i]`. */
  order: Uint32Array
}

/** How many files `buildSegment` reads between two calls of its `check`. */
const CHECK_EVERY = 1024

/**
 * Reads every file of the job and builds the segment (a file gone meanwhile is left out; an
 * unreadable one is indexed by its id only).
 * @param job the files
 * @param check called every CHECK_EVERY files (the search process: is its parent still there?)
 * @returns the segment
 */
export async function buildSegment (job: SegmentJob, check?: () => void): Promise<BuiltSegment> {
  const order = Array.from(job.files.keys()).sort((a, b) => {
    const x = (job.files[a] as [string, string])[0]
    const y = (job.files[b] as [string, string])[0]
    return x < y ? -1 : x > y ? 1 : 0
  })
  const builder = new SegmentBuilder()
  const kept: number[] = []
  for (const [n, i] of order.entries()) {
    if (check !== undefined && n % CHECK_EVERY === 0) check()
    const [id, file] = job.files[i] as [string, string]
    const state = await readEntryFile(job.repoRealDir, file, formatOfFile(file, job.format))
    if (state.kind === 'missing') continue
    builder.add(entryTerms(id, state.kind === 'ok' ? state.data : undefined, job.titleField))
    kept.push(i)
  }
  return { segment: builder.finish(), order: Uint32Array.from(kept) }
}
