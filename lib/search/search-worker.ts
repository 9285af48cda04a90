/**
 * The search worker: builds a collection's full-text segment in its own thread and transfers the
 * typed arrays back (no copy). Tokenizing every file of a collection makes garbage by the hundred
 * megabytes; in the worker that heap goes away with the thread. Started as a child process
 * instead (segment-reader.ts `writeSegmentFile`), it builds the segment and writes it to its file
 * (segment-process.ts).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { buildSegment, type SegmentJob } from './build-segment.js'
import { serveSegmentBuild } from './segment-process.js'

if (parentPort !== null) {
  const built = await buildSegment(workerData as SegmentJob)
  const s = built.segment
  parentPort.postMessage(built, [s.termStart.buffer, s.postStart.buffer, s.bodyStart.buffer, s.postings.buffer, s.df.buffer, s.bodyLen.buffer, built.order.buffer] as ArrayBuffer[])
} else {
  serveSegmentBuild()
}
