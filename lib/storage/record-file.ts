/**
 * Where a row table record (`row-table.ts`) keeps its id and file, in a module of its own so the
 * stat worker (`stat-worker.ts`) can walk a table's records without loading the rest.
 * A record: u32 record length, u32 id hash, f64 order, u8 flags, u8 signature length, u16 id
 * length, u16 file length, u32 revision, then the id, the signature, the file and the payload.
 */

/** The fixed part of a record, before its id. */
export const RECORD_HEAD = 26

/**
 * A record's id.
 * @param buf the records
 * @param start where the record starts
 * @returns the id
 */
export function idAt (buf: Buffer, start: number): string {
  return buf.toString('utf8', start + RECORD_HEAD, start + RECORD_HEAD + buf.readUInt16LE(start + 18))
}

/**
 * A record's file, when it is not the id's default one.
 * @param buf the records
 * @param start where the record starts
 * @returns absolute path, or null
 */
export function fileAt (buf: Buffer, start: number): string | null {
  const length = buf.readUInt16LE(start + 20)
  if (length === 0) return null
  const from = start + RECORD_HEAD + buf.readUInt16LE(start + 18) + buf[start + 17]!
  return buf.toString('utf8', from, from + length)
}

/**
 * The file of the record at `start` of records laid back to back (`RowTable.sharedRecords`).
 * @param records the records
 * @param start where the record starts
 * @param prefix what an id's default file starts with (its folder and a separator)
 * @param suffix what it ends with (the extension)
 * @returns the file
 */
export function recordFileAt (records: Buffer, start: number, prefix: string, suffix: string): string {
  return fileAt(records, start) ?? prefix + idAt(records, start) + suffix
}

/**
 * Where the record after the one at `start` starts.
 * @param records the records
 * @param start where the record starts
 * @returns the next record's start
 */
export function nextRecord (records: Buffer, start: number): number {
  return start + records.readUInt32LE(start)
}

/**
 * Whether a record's signature is this one (no string is built).
 * @param records the records
 * @param start where the record starts
 * @param sig a file signature
 * @returns true when equal
 */
export function recordSigIs (records: Buffer, start: number, sig: string): boolean {
  const length = records[start + 17]!
  if (length !== sig.length) return false
  const from = start + RECORD_HEAD + records.readUInt16LE(start + 18)
  for (let i = 0; i < length; i++) if (records[from + i] !== sig.charCodeAt(i)) return false
  return true
}
