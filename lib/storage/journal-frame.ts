/**
 * Framing of the history journal's records (history-journal.ts): each record is
 * `magic (4 bytes) | length (u32 LE) | crc32 of length and payload (u32 LE) | payload`.
 * A reader stops at the first frame that is incomplete, too long, or whose checksum does not
 * match: after a crash the tail of a segment may hold a torn write (or zeros, or old blocks), and
 * nothing after it was ever acknowledged (records are appended in order, each fsynced before its
 * save is answered), so stopping there loses nothing that was promised.
 */
import { crc32 } from 'node:zlib'

/** `CMSJ`: every frame starts with it (a run of zeros or stray bytes is never a frame). */
const MAGIC = 0x4a534d43
/** Bytes before the payload. */
export const FRAME_HEADER = 12
/** The largest payload a frame may hold (a history snapshot is a few KB; an entry at most 1 MiB). */
export const MAX_PAYLOAD = 16 * 1024 * 1024

/**
 * One framed record.
 * @param payload the record's bytes
 * @returns header and payload, ready to append
 */
export function encodeFrame (payload: Uint8Array): Buffer {
  if (payload.byteLength > MAX_PAYLOAD) throw new Error(`A journal record of ${payload.byteLength} bytes is over the limit`)
  const frame = Buffer.allocUnsafe(FRAME_HEADER + payload.byteLength)
  frame.writeUInt32LE(MAGIC, 0)
  frame.writeUInt32LE(payload.byteLength, 4)
  frame.set(payload, FRAME_HEADER)
  frame.writeUInt32LE(checksum(frame), 8)
  return frame
}

/** What a segment's bytes hold. */
export interface DecodedFrames {
  /** The payloads of the complete, intact frames, in order. */
  payloads: Buffer[]
  /** Where the intact frames end. */
  end: number
  /** Why reading stopped before the end of the bytes (null: it read them all). */
  stopped: null | 'torn' | 'bad-magic' | 'too-long' | 'checksum'
}

/**
 * Reads frames from the start of a segment's bytes, up to the first one that is not intact.
 * @param bytes a segment's content
 * @returns the payloads and where (and why) reading stopped
 */
export function decodeFrames (bytes: Buffer): DecodedFrames {
  const payloads: Buffer[] = []
  let at = 0
  while (at < bytes.byteLength) {
    if (bytes.byteLength - at < FRAME_HEADER) return { payloads, end: at, stopped: 'torn' }
    if (bytes.readUInt32LE(at) !== MAGIC) return { payloads, end: at, stopped: 'bad-magic' }
    const length = bytes.readUInt32LE(at + 4)
    if (length > MAX_PAYLOAD) return { payloads, end: at, stopped: 'too-long' }
    if (bytes.byteLength - at - FRAME_HEADER < length) return { payloads, end: at, stopped: 'torn' }
    const frame = bytes.subarray(at, at + FRAME_HEADER + length)
    if (bytes.readUInt32LE(at + 8) !== checksum(frame)) return { payloads, end: at, stopped: 'checksum' }
    payloads.push(frame.subarray(FRAME_HEADER))
    at += FRAME_HEADER + length
  }
  return { payloads, end: at, stopped: null }
}

/** crc32 of a frame's length field and payload (the magic is checked on its own). */
function checksum (frame: Buffer): number {
  return crc32(frame.subarray(FRAME_HEADER), crc32(frame.subarray(4, 8)))
}
