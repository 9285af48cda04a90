/**
 * The built part of a collection's full-text index, all in typed arrays: a sorted term dictionary
 * (one string, offsets), each term's postings (delta-encoded bytes, see postings.ts) and how many
 * entries hold it, and each entry's body length. No document text is kept. Built in one pass
 * over the entries (in a worker thread for big collections) and never changed: later changes go
 * to the index's small overlay (full-text-index.ts).
 */
import { PostingList } from './postings.js'
import { bodyLength, type EntryTerms } from './entry-terms.js'

/** The segment's arrays, as a worker posts them back (buffers transferred, not copied). */
export interface SegmentData {
  /** Every term, sorted, concatenated. */
  dict: string
  /** Where term i starts in `dict` (n + 1 offsets). */
  termStart: Uint32Array
  /** Where term i's postings start in `postings` (n + 1 offsets). */
  postStart: Uint32Array
  /** Where term i's body-only postings start (postings.ts: two runs a term). */
  bodyStart: Uint32Array
  postings: Uint8Array
  /** How many entries hold term i. */
  df: Uint32Array
  /** Body word count of each document (capped at 65,535). */
  bodyLen: Uint16Array
  /** Number of documents. */
  docs: number
}

/** Builds a segment from entries given in document-number order. */
export class SegmentBuilder {
  readonly #terms = new Map<string, PostingList>()
  readonly #bodyLen: number[] = []

  /**
   * Adds the next document.
   * @param terms its terms (empty for an entry that cannot be read: only its id)
   */
  add (terms: EntryTerms): void {
    const doc = this.#bodyLen.length
    this.#bodyLen.push(Math.min(65_535, bodyLength(terms)))
    for (const [term, flags] of terms) {
      let writer = this.#terms.get(term)
      if (writer === undefined) { writer = new PostingList(); this.#terms.set(term, writer) }
      writer.add(doc, flags)
    }
  }

  /**
   * The finished segment.
   * @returns its arrays
   */
  finish (): SegmentData {
    const terms = [...this.#terms.keys()].sort()
    const termStart = new Uint32Array(terms.length + 1)
    const postStart = new Uint32Array(terms.length + 1)
    const df = new Uint32Array(terms.length)
    const bodyStart = new Uint32Array(terms.length)
    let chars = 0
    let bytes = 0
    terms.forEach((term, i) => {
      const w = this.#terms.get(term) as PostingList
      termStart[i] = chars
      postStart[i] = bytes
      df[i] = w.count
      chars += term.length
      bytes += w.byteLength()
    })
    termStart[terms.length] = chars
    postStart[terms.length] = bytes
    const postings = new Uint8Array(bytes)
    terms.forEach((term, i) => {
      bodyStart[i] = (this.#terms.get(term) as PostingList).encode(postings, postStart[i] as number)[0]
    })
    return { dict: terms.join(''), termStart, postStart, bodyStart, postings, df, bodyLen: Uint16Array.from(this.#bodyLen), docs: this.#bodyLen.length }
  }
}

/** A built segment, read-only. */
export class SearchSegment {
  readonly data: SegmentData

  /** @param data the arrays from a SegmentBuilder */
  constructor (data: SegmentData) {
    this.data = data
  }

  /** Number of terms. */
  get size (): number {
    return this.data.df.length
  }

  /**
   * Term i of the sorted dictionary.
   * @param i term number
   * @returns the term
   */
  term (i: number): string {
    return this.data.dict.slice(this.data.termStart[i], this.data.termStart[i + 1])
  }

  /**
   * The first term number whose term is >= `term` (binary search).
   * @param term a term
   * @returns a term number in [0, size]
   */
  lowerBound (term: string): number {
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.term(mid) < term) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /**
   * The term numbers holding a word: [i, i + 1) for an exact one, the range of every term that
   * starts with it for a prefix.
   * @param word a folded term
   * @param prefix match terms starting with it
   * @returns [from, to) term numbers (empty when none)
   */
  range (word: string, prefix: boolean): [number, number] {
    const from = this.lowerBound(word)
    if (!prefix) return from < this.size && this.term(from) === word ? [from, from + 1] : [from, from]
    // Every term starting with `word` sorts before `word` followed by the highest code unit.
    return [from, this.lowerBound(word + '\uffff')]
  }

  /** Bytes the segment's arrays hold (the dictionary string at one byte per character). */
  get bytes (): number {
    const d = this.data
    return d.dict.length + d.termStart.byteLength + d.postStart.byteLength + d.bodyStart.byteLength + d.postings.byteLength + d.df.byteLength + d.bodyLen.byteLength
  }
}
