/** The worker thread of large-entry-text.ts: a large entry text parsed, or data written, here and not on the event loop. */
import { parseEntry, serializeEntry, EntryParseError } from './formats.js'
import { serveJobs } from './worker-pool.js'
import type { EntryTextJob, EntryTextReply } from './large-entry-text.js'

serveJobs<EntryTextJob, EntryTextReply>(job => {
  try {
    return 'parse' in job ? { data: parseEntry(job.format, job.parse) } : { text: serializeEntry(job.format, job.data, job.previousText, job.opts) }
  } catch (err) {
    if (err instanceof EntryParseError) return { unreadable: err.message }
    throw err
  }
})
