/**
 * Postings as bytes: each one a varint of `(docDelta << 5) | flags` (flags from entry-terms.ts),
 * doc numbers ascending. A term in half the entries of a collection costs one byte per entry.
 */

/** Bits of a posting value that hold the entry's flags for the term. */
export const FLAG_BITS = 5
const FLAG_MASK = (1 << FLAG_BITS) - 1

/** A growable byte buffer of one term's postings (used while building). */
export class PostingWriter {
  bytes = new Uint8Array(8)
  length = 0
  last = 0
  count = 0

  /**
   * Appends a posting (docs in ascending order).
   * @param doc document number
   * @param flags the term's flags in that document
   */
  add (doc: number, flags: number): void {
    let v = (doc - this.last) * 32 + flags
    this.last = doc
    this.count++
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2)
      grown.set(this.bytes)
      this.bytes = grown
    }
    while (v >= 128) {
      this.bytes[this.length++] = (v % 128) | 128
      v = Math.floor(v / 128)
    }
    this.bytes[this.length++] = v
  }
}

/**
 * Calls `each(doc, flags)` for every posting in `bytes[from, to)`.
 * @param bytes the postings
 * @param from first byte
 * @param to end byte
 * @param each receives a document number and its flags
 */
export function forEachPosting (bytes: Uint8Array, from: number, to: number, each: (doc: number, flags: number) => void): void {
  let doc = 0
  let i = from
  while (i < to) {
    let v = 0
    let shift = 1
    let b = bytes[i++] as number
    while (b >= 128) {
      v += (b - 128) * shift
      shift *= 128
      b = bytes[i++] as number
    }
    v += b * shift
    doc += Math.floor(v / 32)
    each(doc, v & FLAG_MASK)
  }
}
