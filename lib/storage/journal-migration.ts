/**
 * Reads the history journal an earlier version kept in `.git/cms/history-journal/`, so the first
 * start of this version can fold it into the ref. Segments `<16 digits>.journal` hold frames
 * `"CMSJ" | length (u32 LE) | crc32 of length and payload (u32 LE) | payload`, the payload
 * `{"c": collection, "i": id, "s": snapshot}`; a segment ends at its first torn frame.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { isCollectionName, isEntryId } from './names.js'

const MAGIC = 0x4a534d43
const HEADER = 12
const SEGMENT = /^\d{16}\.journal$/

/** A snapshot the old journal held. */
export interface JournalRecord {
  collection: string
  id: string
  snapshot: { ts: number, [key: string]: unknown }
}

/**
 * Every well-formed record of the journal's segments, oldest first.
 * @param dir the journal's folder
 * @returns the records ([] when there is no journal)
 */
export async function readOldJournal (dir: string): Promise<JournalRecord[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter(n => SEGMENT.test(n)).sort()
  const records: JournalRecord[] = []
  for (const name of names) {
    const bytes = await readFile(path.join(dir, name))
    for (let at = 0; at + HEADER <= bytes.length;) {
      const length = bytes.readUInt32LE(at + 4)
      if (bytes.readUInt32LE(at) !== MAGIC || at + HEADER + length > bytes.length) break
      const payload = bytes.subarray(at + HEADER, at + HEADER + length)
      if (bytes.readUInt32LE(at + 8) !== crc32(payload, crc32(bytes.subarray(at + 4, at + 8)))) break
      const record = parseRecord(payload)
      if (record !== null) records.push(record)
      at += HEADER + length
    }
  }
  return records
}

function parseRecord (payload: Buffer): JournalRecord | null {
  try {
    const { c, i, s } = JSON.parse(payload.toString('utf8')) as { c?: unknown, i?: unknown, s?: { ts?: unknown } }
    if (!isCollectionName(c) || typeof i !== 'string' || !isEntryId(i) || typeof s !== 'object' || s === null) return null
    if (!Number.isSafeInteger(s.ts) || (s.ts as number) <= 0) return null
    return { collection: c, id: i, snapshot: s as JournalRecord['snapshot'] }
  } catch {
    return null
  }
}
