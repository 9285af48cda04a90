/** A file that cannot be decoded into entry data (an unreadable entry, `readError`). */
export class EntryParseError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'EntryParseError'
  }
}
