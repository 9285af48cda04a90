/**
 * Large entry texts parsed and written in a worker thread: `yaml` reads ~1 KB a millisecond (a 1 MB front matter held the
 * event loop 1.5-2 s). Up to INLINE_CHARS, where data-diff's budget keeps an edit within 64 KiB of parsing, the event loop does it.
 */
import { WorkerPool } from './worker-pool.js'
import { LimitExceededError } from '../errors.js'
import { parseEntry, serializeEntry, isMarkdownFormat, frontmatterLength, EntryParseError, type EntryData, type EntryFormat } from './formats.js'

const INLINE_CHARS = 4096

/** What the thread is asked, and what it answers (`unreadable`: an EntryParseError's message; its class does not cross threads). */
export type EntryTextJob = { format: EntryFormat, parse: string } | { format: EntryFormat, data: EntryData, previousText?: string, opts?: Parameters<typeof serializeEntry>[3] }
export type EntryTextReply = { data: EntryData } | { text: string } | { unreadable: string }

/** One thread, started on the first large text, gone after 30 s idle; a job over a minute ends it (unreadable, or the save refused). */
const pool = new WorkerPool<EntryTextJob, EntryTextReply>({
  file: new URL('./entry-text-thread', import.meta.url), size: 1, timeLimitMs: 60_000, idleMs: 30_000,
  failure: (_why, detail) => new EntryParseError(`The entry text could not be handled: ${detail}`)
})

/** Whether a text (a Markdown file's up to its body) and data (as JSON, a Markdown entry's without `body`) are small. */
function isSmall (format: EntryFormat, text = '', data?: EntryData): boolean {
  const md = isMarkdownFormat(format)
  const { body: _body, ...rest } = data ?? {}
  try { return (md ? frontmatterLength(text) : text.length) <= INLINE_CHARS && (data === undefined || JSON.stringify(md ? rest : data).length <= INLINE_CHARS) } catch { return false }
}

async function inThread (job: EntryTextJob): Promise<EntryTextReply> {
  const reply = await pool.run(job)
  if ('unreadable' in reply) throw new EntryParseError(reply.unreadable)
  return reply
}

/**
 * parseEntry, in the thread when the text is large.
 * @returns the entry data; rejects with EntryParseError when the text cannot be decoded
 */
export async function parseEntryText (format: EntryFormat, text: string): Promise<EntryData> {
  return isSmall(format, text) ? parseEntry(format, text) : (await inThread({ format, parse: text }) as { data: EntryData }).data
}

/**
 * serializeEntry, in the thread when the previous text or the data is large.
 * @returns the file's new text; rejects with LimitExceededError (422) when the thread could not write it
 */
export async function serializeEntryText (format: EntryFormat, data: EntryData, previousText?: string, opts?: Parameters<typeof serializeEntry>[3]): Promise<string> {
  if (isSmall(format, previousText, data)) return serializeEntry(format, data, previousText, opts)
  return (await inThread({ format, data, previousText, opts }).catch((err: Error) => {
    throw err instanceof EntryParseError ? new LimitExceededError(`The entry's new text could not be written: ${err.message}`) : err
  }) as { text: string }).text
}
