/** A file that cannot be decoded into entry data (an unreadable entry, `readError`). */
export class EntryParseError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'EntryParseError'
  }
}

/** The EntryParseError for a parser's error: the first line of its message, 300 characters at most. */
export function entryParseError (err: unknown): EntryParseError {
  const message = err instanceof Error ? err.message : String(err)
  return new EntryParseError((message.split('\n')[0] ?? message).slice(0, 300))
}
