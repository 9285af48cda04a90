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

/** The part of a segment a search reads by term: the sorted dictionary, the term arrays (see SegmentData). */
export interface TermTable {
  dict: string
  termStart: Uint32Array
  postStart: Uint32Array
  bodyStart: Uint32Array
  df: Uint32Array
}

/** A segment's terms and postings for the length of one search (segment-file.ts: read from the file). */
export interface SegmentView extends TermTable {
  /**
   * Postings bytes [from, to) (offsets into the segment's postings): index 0 is byte `from`. Valid
   * until the next call.
   */
  postings: (from: number, to: number) => Uint8Array
  /** How many postings bytes one `postings` call should ask for at most (Infinity: any). */
  readonly chunk: number
  /** Ends the view (closes what it opened). */
  close: () => void
}

/**
 * Where a segment's data lives when it is not in this process's memory: the persisted file
 * (segment-file.ts).
 */
export interface SegmentSource {
  /**
   * Opens the segment's terms and postings for one search.
   * @returns the view (throws SegmentFileChanged when the file is no longer the one checked)
   */
  open: () => SegmentView
  /** Bytes held in this process. */
  readonly bytes: number
}

/**
 * Term i of a table's sorted dictionary.
 * @param table the terms
 * @param i term number
 * @returns the term
 */
export function termOf (table: TermTable, i: number): string {
  return table.dict.slice(table.termStart[i], table.termStart[i + 1])
}

/**
 * The first term number whose term is >= `term` (binary search).
 * @param table the terms
 * @param term a term
 * @returns a term number in [0, number of terms]
 */
export function lowerBound (table: TermTable, term: string): number {
  let lo = 0
  let hi = table.df.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (termOf(table, mid) < term) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The term numbers holding a word: [i, i + 1) for an exact one, the range of every term that
 * starts with it for a prefix.
 * @param table the terms
 * @param word a folded term
 * @param prefix match terms starting with it
 * @returns [from, to) term numbers (empty when none)
 */
export function termRange (table: TermTable, word: string, prefix: boolean): [number, number] {
  const from = lowerBound(table, word)
  if (!prefix) return from < table.df.length && termOf(table, from) === word ? [from, from + 1] : [from, from]
  // Every term starting with `word` sorts before `word` followed by the highest code unit.
  return [from, lowerBound(table, word + '\uffff')]
}

/**
 * A built segment, read-only: in memory as built (`data`), or, once persisted or when loaded from
 * its file, with its terms and postings read from the file by each search (`source`); the
 * documents' body lengths are always in memory.
 */
export class SearchSegment {
  /** Number of documents. */
  readonly docs: number
  /** Body word count of each document. */
  readonly bodyLen: Uint16Array
  #data: SegmentData | null
  #source: SegmentSource | null
  #memoryView: SegmentView | null = null

  /**
   * @param data the arrays from a SegmentBuilder, or null with a source
   * @param source where the terms and postings are read from, or null with the data
   * @param bodyLen with a source: the documents' body lengths
   */
  constructor (data: SegmentData | null, source: SegmentSource | null = null, bodyLen?: Uint16Array) {
    if (data === null && (source === null || bodyLen === undefined)) throw new Error('a segment needs its data or a source')
    this.#data = data
    this.#source = data === null ? source : null
    this.bodyLen = data?.bodyLen ?? bodyLen as Uint16Array
    this.docs = this.bodyLen.length
  }

  /** The arrays as built, while they are in memory (null once read from the file). */
  get data (): SegmentData | null {
    return this.#data
  }

  /**
   * From now on reads the terms and postings from the persisted file, which holds this very
   * segment, and lets the arrays go.
   * @param source the file
   */
  useSource (source: SegmentSource): void {
    this.#source = source
    this.#data = null
    this.#memoryView = null
  }

  /**
   * The terms and postings for one search; `close` it when done.
   * @returns the view
   */
  open (): SegmentView {
    if (this.#source !== null) return this.#source.open()
    const d = this.#data as SegmentData
    this.#memoryView ??= { dict: d.dict, termStart: d.termStart, postStart: d.postStart, bodyStart: d.bodyStart, df: d.df, postings: (from, to) => d.postings.subarray(from, to), chunk: Infinity, close: () => {} }
    return this.#memoryView
  }

  /** Bytes the segment holds in this process (the dictionary string at one byte per character). */
  get bytes (): number {
    const d = this.#data
    if (d === null) return this.bodyLen.byteLength + (this.#source as SegmentSource).bytes
    return d.dict.length + d.termStart.byteLength + d.postStart.byteLength + d.bodyStart.byteLength + d.postings.byteLength + d.df.byteLength + d.bodyLen.byteLength
  }
}
