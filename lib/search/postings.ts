/**
 * Postings as bytes, doc numbers ascending, each a varint (7 bits a byte, low bits first;
 * full-text-index.ts decodes them inline). A term's postings are two runs: first the entries that
 * hold it in the id, a title or another field, each `(docGap << 5) | flags` (flags from
 * entry-terms.ts); then the entries that hold it in the body only, each `(docGap << 2) | count`
 * (the body count 0-3): a common body word costs one byte per entry holding it up to a gap of 32.
 * Measured at 10,000 bench posts: 1.61 bytes a posting with one run of 5-bit flags, 1.29 with two.
 */

/** The bits of a posting value that hold the entry's flags for the term (first run: 5 bits). */
const FLAG_MASK = 31

/**
 * One term's postings while a segment is built: plain numbers (`doc * 32 + flags`) in the
 * builder's heap, encoded into the segment's one byte array at the end. (A typed array per term
 * would be tens of thousands of small native allocations, which the thread's allocator keeps
 * after the worker exits: measured at 10,000 entries, the process kept 21 MB more RSS after
 * the worker than before it that way, 8 MB this way, the segment itself 3.5 MB of it.)
 */
export class PostingList {
  readonly values: number[] = []

  /**
   * Appends a posting (docs in ascending order).
   * @param doc document number
   * @param flags the term's flags in that document
   */
  add (doc: number, flags: number): void {
    this.values.push(doc * 32 + flags)
  }

  /** Number of postings. */
  get count (): number {
    return this.values.length
  }

  /** Bytes the encoded postings take. */
  byteLength (): number {
    let n = 0
    for (const body of [false, true]) {
      let last = 0
      for (const v of this.values) {
        if (isBodyOnly(v) !== body) continue
        const doc = Math.floor(v / 32)
        n += varintLength(body ? (doc - last) * 4 + ((v & FLAG_MASK) >> 3) : (doc - last) * 32 + (v & FLAG_MASK))
        last = doc
      }
    }
    return n
  }

  /**
   * Encodes the postings into `bytes` at `at`: the field run, then the body-only run.
   * @param bytes the segment's postings
   * @param at where this term's start
   * @returns `[where the body-only run starts, the end offset]`
   */
  encode (bytes: Uint8Array, at: number): [number, number] {
    let i = at
    let split = at
    for (const body of [false, true]) {
      if (body) split = i
      let last = 0
      for (const p of this.values) {
        if (isBodyOnly(p) !== body) continue
        const doc = Math.floor(p / 32)
        let v = body ? (doc - last) * 4 + ((p & FLAG_MASK) >> 3) : (doc - last) * 32 + (p & FLAG_MASK)
        last = doc
        while (v >= 128) {
          bytes[i++] = (v % 128) | 128
          v = Math.floor(v / 128)
        }
        bytes[i++] = v
      }
    }
    return [split, i]
  }
}

/** Whether a posting (`doc * 32 + flags`) is in the body only. */
function isBodyOnly (p: number): boolean {
  return (p & 7) === 4
}

function varintLength (v: number): number {
  let n = 1
  while (v >= 128) { v = Math.floor(v / 128); n++ }
  return n
}
