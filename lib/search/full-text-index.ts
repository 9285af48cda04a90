/**
 * A collection's full-text index: a built segment (typed arrays, search-segment.ts) plus a small
 * overlay of the entries changed since it was built (their postings in plain arrays; the segment's
 * document of a changed or removed entry is marked dead). Searching ANDs the query's words (the
 * last one as a prefix too) over dense per-document scratch arrays and returns rank keys sorted
 * (ranking.ts); nothing is allocated per matching entry but its key.
 */
import { bodyLength, IN_BODY, type EntryTerms } from './entry-terms.js'
import { ALL_FIELDS, ALL_TITLE, docOfKey, idfOf, rankKey, tierBitsOf, tierOf, wordScore } from './ranking.js'
import { termRange, type SearchSegment, type SegmentView } from './search-segment.js'
import type { SearchQuery } from './search-query.js'
import { sortedIndexOf } from './sorted-ids.js'

/** What a search found: how many, the first rank keys in rank order, a way to name their entries. */
export interface RankedDocs {
  /** Entries matching. */
  total: number
  /** Sorted rank keys (ranking.ts) of the first `limit` matching entries. */
  keys: Float64Array
  /**
   * The entry id of a rank key.
   * @param key one of `keys`
   * @returns the id
   */
  idOf: (key: number) => string
}

/** One term's postings among the changed entries: `doc * 32 + flags`, docs ascending. */
type OverlayPostings = number[]

/** The full-text index of one collection. */
export class FullTextIndex {
  readonly #segment: SearchSegment
  /** The segment's document ids, sorted (document number = position). */
  readonly #baseIds: readonly string[]
  /** Ids of the overlay's documents (document number = segment size + position). */
  readonly #overlayIds: string[] = []
  readonly #overlayBodyLen: number[] = []
  /** An entry's current overlay document, or -1 once removed (absent: its segment document). */
  readonly #overlayDoc = new Map<string, number>()
  readonly #overlay = new Map<string, OverlayPostings>()
  /** 1 for a document that no longer counts (changed, removed). */
  #dead: Uint8Array
  #live: number
  /** Segment documents dropped (changed or removed entries). */
  #deadBase = 0
  #bodyTotal = 0

  /**
   * @param segment the built segment
   * @param baseIds its documents' ids, in document order (sorted)
   */
  constructor (segment: SearchSegment, baseIds: readonly string[]) {
    this.#segment = segment
    this.#baseIds = baseIds
    this.#dead = new Uint8Array(segment.docs + 64)
    this.#live = segment.docs
    for (const len of segment.bodyLen) this.#bodyTotal += len
  }

  /** Entries indexed. */
  get size (): number {
    return this.#live
  }

  /** Changes since the segment was built: overlay documents, and segment documents dropped. */
  get overlaySize (): number {
    return this.#overlayIds.length + this.#deadBase
  }

  /** Entries changed (indexed again, or removed) since the segment was built, each counted once. */
  get changedEntries (): number {
    return this.#overlayDoc.size
  }

  /** Bytes held by the segment's arrays in memory and the dead marks (the overlay and the scratch arrays every index shares not counted). */
  get bytes (): number {
    return this.#segment.bytes + this.#dead.byteLength
  }

  /**
   * Indexes an entry's current terms, replacing what was indexed for it.
   * @param id entry id
   * @param terms its terms
   */
  set (id: string, terms: EntryTerms): void {
    this.remove(id)
    const doc = this.#segment.docs + this.#overlayIds.length
    this.#overlayIds.push(id)
    const len = bodyLength(terms)
    this.#overlayBodyLen.push(len)
    this.#bodyTotal += len
    this.#overlayDoc.set(id, doc)
    if (doc >= this.#dead.length) {
      const grown = new Uint8Array(this.#dead.length * 2)
      grown.set(this.#dead)
      this.#dead = grown
    }
    for (const [term, flags] of terms) {
      let list = this.#overlay.get(term)
      if (list === undefined) { list = []; this.#overlay.set(term, list) }
      list.push(doc * 32 + flags)
    }
    this.#live++
  }

  /**
   * The overlay document an entry's terms live in now (the one its last `set` made), or -1 when it
   * has none (its terms are in the segment, or it was removed).
   * @param id entry id
   * @returns the document number, or -1
   */
  overlayDocOf (id: string): number {
    const doc = this.#overlayDoc.get(id)
    return doc === undefined || doc < 0 || this.#dead[doc] !== 0 ? -1 : doc
  }

  /**
   * Changes the flags of some terms of an overlay document in place, without indexing the entry
   * again (a title save: issue 18). The caller knows the rest of the entry's terms are unchanged;
   * the body's length is kept as it was.
   * @param doc a document `overlayDocOf` gave
   * @param flags term -> its new flags (0: the entry no longer holds it)
   */
  patchOverlayDoc (doc: number, flags: ReadonlyMap<string, number>): void {
    if (doc < this.#segment.docs || this.#dead[doc] !== 0) throw new Error('not a live overlay document')
    for (const [term, value] of flags) {
      let list = this.#overlay.get(term)
      const at = list === undefined ? 0 : postingIndex(list, doc)
      const found = list !== undefined && at < list.length && Math.floor((list[at] as number) / 32) === doc
      if (value === 0) {
        if (found) list!.splice(at, 1)
        continue
      }
      if (list === undefined) { list = []; this.#overlay.set(term, list) }
      if (found) list[at] = doc * 32 + value
      else list.splice(at, 0, doc * 32 + value)
    }
  }

  /**
   * The flags an overlay document holds for a term (0: none).
   * @param doc an overlay document
   * @param term a term
   * @returns its flags
   */
  overlayFlags (doc: number, term: string): number {
    const list = this.#overlay.get(term)
    if (list === undefined) return 0
    const at = postingIndex(list, doc)
    const p = list[at]
    return p !== undefined && Math.floor(p / 32) === doc ? p & 31 : 0
  }

  /**
   * Forgets an entry.
   * @param id entry id
   */
  remove (id: string): void {
    const doc = this.#docOf(id)
    if (doc < 0 || this.#dead[doc] === 1) return
    this.#dead[doc] = 1
    this.#live--
    this.#bodyTotal -= this.#bodyLenOf(doc)
    if (doc < this.#segment.docs) this.#deadBase++
    this.#overlayDoc.set(id, -1)
  }

  /** The built segment (what is persisted, search-snapshot.ts). */
  get segment (): SearchSegment {
    return this.#segment
  }

  /**
   * Whether a document of the segment still counts (its entry neither changed nor removed since).
   * @param doc a segment document number
   * @returns true when it does
   */
  isBaseLive (doc: number): boolean {
    return doc < this.#segment.docs && this.#dead[doc] === 0
  }

  /**
   * Whether an entry is indexed.
   * @param id entry id
   * @returns true when it is
   */
  has (id: string): boolean {
    const doc = this.#docOf(id)
    return doc >= 0 && this.#dead[doc] === 0
  }

  /**
   * The entries holding every word of the query, ranked.
   * @param query a parsed query with at least one word
   * @param exclude ids left out (the reader's drafted entries)
   * @param limit how many of the first ranks to give (the page's end)
   * @returns the total, the first rank keys and their ids
   */
  search (query: SearchQuery, exclude: ReadonlySet<string> = new Set(), limit = Infinity): RankedDocs {
    const docs = this.#segment.docs + this.#overlayIds.length
    ensureScratch(docs)
    const dead = this.#dead
    const view = this.#segment.open()
    for (const id of exclude) {
      const doc = this.#docOf(id)
      // Marked dead for this search only (restored below).
      if (doc >= 0 && dead[doc] === 0) dead[doc] = 2
    }
    try {
      return this.#search(view, query, docs, limit)
    } finally {
      view.close()
      for (const id of exclude) {
        const doc = this.#docOf(id)
        if (doc >= 0 && dead[doc] === 2) dead[doc] = 0
      }
    }
  }

  #search (view: SegmentView, query: SearchQuery, docs: number, limit: number): RankedDocs {
    const { count, tier, flags: flagsOf, score, hits } = scratch
    const dead = this.#dead
    const n = Math.max(1, this.#live)
    const avg = this.#bodyTotal / n
    const words = this.#wordOrder(view, query)
    const { postStart, bodyStart } = view
    let hitCount = 0
    count.fill(0, 0, docs)
    // Shared with every index: a search cut short (a segment file gone) may have left flags set.
    flagsOf.fill(0, 0, docs)
    for (let step = 0; step < words.length; step++) {
      const { ranges, overlayTerms, df } = words[step] as WordPlan
      const idf = idfOf(df, n)
      hitCount = 0
      // Several terms of a prefix: their places together, the highest body count. (The
      // postings are decoded inline: a call per posting doubled the time of a common word.)
      for (const [from, to] of ranges) {
        // Postings are read a chunk of terms at a time (segment-file.ts), `base` the chunk's first byte.
        let bytes: Uint8Array = new Uint8Array(0)
        let base = 0
        let loaded = 0
        for (let t = from; t < to; t++) {
          const begin = postStart[t] as number
          if ((postStart[t + 1] as number) > loaded) {
            let last = t + 1
            while (last < to && (postStart[last + 1] as number) - begin <= view.chunk) last++
            base = begin
            loaded = postStart[last] as number
            bytes = view.postings(base, loaded)
          }
          const split = (bodyStart[t] as number) - base
          const end = (postStart[t + 1] as number) - base
          let i = begin - base
          let doc = 0
          while (i < end) {
            // The field run (gap << 5 | flags), then the body-only run (gap << 2 | count).
            if (i === split) doc = 0
            let b = bytes[i++] as number
            let v = b & 127
            let shift = 128
            while (b >= 128) {
              b = bytes[i++] as number
              v += (b & 127) * shift
              shift *= 128
            }
            let flags: number
            if (i <= split) { doc += Math.floor(v / 32); flags = v & 31 } else { doc += Math.floor(v / 4); flags = IN_BODY | ((v & 3) << 3) }
            if (count[doc] !== step || dead[doc] !== 0) continue
            const before = flagsOf[doc] as number
            if (before === 0) hits[hitCount++] = doc
            flagsOf[doc] = (before & 7) | (flags & 7) | Math.max(before & 24, flags & 24)
          }
        }
      }
      for (const list of overlayTerms) {
        for (const p of list) {
          const doc = Math.floor(p / 32)
          if (count[doc] !== step || dead[doc] !== 0) continue
          const before = flagsOf[doc] as number
          if (before === 0) hits[hitCount++] = doc
          flagsOf[doc] = (before & 7) | (p & 7) | Math.max(before & 24, p & 24)
        }
      }
      for (let h = 0; h < hitCount; h++) {
        const doc = hits[h] as number
        const flags = flagsOf[doc] as number
        flagsOf[doc] = 0
        count[doc] = step + 1
        const s = wordScore(flags, idf, this.#bodyLenOf(doc), avg)
        if (step === 0) { tier[doc] = tierBitsOf(flags); score[doc] = s } else { tier[doc] = (tier[doc] as number) & tierBitsOf(flags); score[doc] = (score[doc] as number) + s }
      }
      if (hitCount === 0) break
    }
    const keys = topKeys(hitCount, limit, h => {
      const doc = hits[h] as number
      return rankKey(tierOf(tier[doc] as number), score[doc] as number, doc)
    })
    return { total: hitCount, keys, idOf: key => this.#idOf(docOfKey(key)) }
  }

  /**
   * How a draft's terms would rank against this index's statistics (drafts are searched per request).
   * @param query the parsed query
   * @param terms the draft's terms
   * @returns its tier and score, or null when it does not match every word
   */
  rankTerms (query: SearchQuery, terms: EntryTerms): { tier: number, score: number } | null {
    const view = this.#segment.open()
    try {
      return this.#rankTerms(view, query, terms)
    } finally {
      view.close()
    }
  }

  #rankTerms (view: SegmentView, query: SearchQuery, terms: EntryTerms): { tier: number, score: number } | null {
    const n = Math.max(1, this.#live)
    const avg = this.#bodyTotal / n
    const len = bodyLength(terms)
    let bits = ALL_TITLE | ALL_FIELDS
    let score = 0
    for (let i = 0; i < query.words.length; i++) {
      const word = query.words[i] as string
      const prefix = query.prefixLast && i === query.words.length - 1
      let flags = 0
      if (prefix) {
        for (const [term, f] of terms) if (term.startsWith(word)) flags = (flags & 7) | (f & 7) | Math.max(flags & 24, f & 24)
      } else {
        flags = terms.get(word) ?? 0
      }
      if (flags === 0) return null
      bits &= tierBitsOf(flags)
      score += wordScore(flags, idfOf(this.#df(view, word, prefix), n), len, avg)
    }
    return { tier: tierOf(bits), score }
  }

  /** The query's words with their terms, the least frequent first (the AND narrows fastest). */
  #wordOrder (view: SegmentView, query: SearchQuery): WordPlan[] {
    const plans = query.words.map((word, i) => {
      const prefix = query.prefixLast && i === query.words.length - 1
      const [from, to] = termRange(view, word, prefix)
      const overlayTerms: OverlayPostings[] = []
      if (prefix) {
        for (const [term, list] of this.#overlay) if (term.startsWith(word)) overlayTerms.push(list)
      } else {
        const list = this.#overlay.get(word)
        if (list !== undefined) overlayTerms.push(list)
      }
      let df = 0
      for (let t = from; t < to; t++) df += view.df[t] as number
      for (const list of overlayTerms) df += list.length
      return { ranges: from < to ? [[from, to]] as Array<[number, number]> : [], overlayTerms, df }
    })
    return plans.sort((a, b) => a.df - b.df)
  }

  #df (view: SegmentView, word: string, prefix: boolean): number {
    const [from, to] = termRange(view, word, prefix)
    let df = 0
    for (let t = from; t < to; t++) df += view.df[t] as number
    return df
  }

  #docOf (id: string): number {
    const overlay = this.#overlayDoc.get(id)
    if (overlay !== undefined) return overlay
    // The segment's ids are sorted: binary search.
    return sortedIndexOf(this.#baseIds, id)
  }

  #idOf (doc: number): string {
    const base = this.#segment.docs
    return (doc < base ? this.#baseIds[doc] : this.#overlayIds[doc - base]) as string
  }

  #bodyLenOf (doc: number): number {
    const base = this.#segment.docs
    return (doc < base ? this.#segment.bodyLen[doc] : this.#overlayBodyLen[doc - base]) ?? 0
  }
}

/**
 * Scratch arrays of a search, one per document, shared by every collection's index (a search runs
 * within one synchronous step: one at a time). A thousand collections held one set each.
 */
const scratch = {
  count: new Uint8Array(0),
  tier: new Uint8Array(0),
  flags: new Uint8Array(0),
  score: new Float32Array(0),
  hits: new Int32Array(0)
}

function ensureScratch (docs: number): void {
  if (scratch.count.length >= docs) return
  const size = Math.max(docs + 256, Math.ceil(docs * 1.1))
  scratch.count = new Uint8Array(size)
  scratch.tier = new Uint8Array(size)
  scratch.flags = new Uint8Array(size)
  scratch.score = new Float32Array(size)
  scratch.hits = new Int32Array(size)
}

/** Where a document's posting is (or would go) in an overlay list, which is ordered by document. */
function postingIndex (list: OverlayPostings, doc: number): number {
  let lo = 0
  let hi = list.length
  const key = doc * 32
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((list[mid] as number) < key) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The `limit` smallest of `n` keys, sorted: the whole set sorted when it is small, else a bounded
 * max-heap (a page of 24 among 100,000 matches is 100,000 comparisons with one heap of 24, not a sort).
 */
function topKeys (n: number, limit: number, keyOf: (i: number) => number): Float64Array {
  const k = Math.min(n, limit)
  if (k === n || n <= 256) {
    const all = new Float64Array(n)
    for (let i = 0; i < n; i++) all[i] = keyOf(i)
    all.sort()
    return k === n ? all : all.slice(0, k)
  }
  const heap = new Float64Array(k)
  let size = 0
  for (let i = 0; i < n; i++) {
    const key = keyOf(i)
    if (size < k) {
      // Sift up.
      let c = size++
      heap[c] = key
      while (c > 0) {
        const parent = (c - 1) >> 1
        if ((heap[parent] as number) >= (heap[c] as number)) break
        const tmp = heap[parent] as number; heap[parent] = heap[c] as number; heap[c] = tmp
        c = parent
      }
    } else if (key < (heap[0] as number)) {
      // Replace the largest, sift down.
      heap[0] = key
      let c = 0
      for (;;) {
        const l = 2 * c + 1
        const r = l + 1
        let m = c
        if (l < k && (heap[l] as number) > (heap[m] as number)) m = l
        if (r < k && (heap[r] as number) > (heap[m] as number)) m = r
        if (m === c) break
        const tmp = heap[m] as number; heap[m] = heap[c] as number; heap[c] = tmp
        c = m
      }
    }
  }
  return heap.sort()
}

interface WordPlan {
  ranges: Array<[number, number]>
  overlayTerms: OverlayPostings[]
  df: number
}
