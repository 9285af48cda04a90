/**
 * The texts the service wrote into entry files lately, each kept with its file and the signature
 * that file had right after the write (issue 18, eleventh pass). The next save of such an entry
 * takes its text from here after one lstat instead of opening and reading the file (open, fstat,
 * read, close): the same trust the index gives its rows, whose fields it serves while the file's
 * signature (`<size>:<mtimeMs>:<ino>:<ctimeMs>`) is unchanged. Any write by anyone changes the
 * ctime, which no user can set back, so an outside edit that keeps the size and sets the mtime back
 * is still noticed. A link (even to the same file) is never served from here. Keyed by the file's
 * absolute path, one bound for the whole process (however many collections and instances).
 */
import { lstatSync } from 'node:fs'
import { signatureOf } from './file-signature.js'
import { LruCache } from './lru-cache.js'

/** How many texts are kept at most (the least recently written or used go first). */
export const WRITTEN_TEXTS_MAX_ENTRIES = 1024
/** How many UTF-16 code units of text are kept at most, all entries together (2-4 MB). */
export const WRITTEN_TEXTS_MAX_CHARS = 2 * 1024 * 1024

interface WrittenText {
  sig: string
  text: string
}

/** A bounded map from an entry file to the text the service last wrote into it. */
export class WrittenTexts {
  /** Weighed by text length (UTF-16 code units). */
  readonly #texts: LruCache<string, WrittenText>

  /**
   * @param maxEntries texts kept at most
   * @param maxChars total text length kept at most (a longer text is not kept)
   */
  constructor (maxEntries = WRITTEN_TEXTS_MAX_ENTRIES, maxChars = WRITTEN_TEXTS_MAX_CHARS) {
    this.#texts = new LruCache<string, WrittenText>(maxChars, kept => kept.text.length, maxEntries)
  }

  /**
   * Keeps the text the service just wrote into an entry's file.
   * @param file the file written (absolute path)
   * @param sig the file's signature stat-ed after the write
   * @param text the text written (the caller checked that its byte length is the signature's size)
   */
  remember (file: string, sig: string, text: string): void {
    this.#texts.set(file, { sig, text })
  }

  /**
   * Drops a file's text (its entry deleted, or the file changed).
   * @param file absolute path
   */
  forget (file: string): void {
    this.#texts.delete(file)
  }

  /**
   * The text kept for a file, when it is still a plain file (not a link) with the signature the
   * index holds for it, which is the one it had right after the write (one lstat).
   * @param file the entry's file (absolute path)
   * @param sig the signature the index holds for it
   * @returns the text, or undefined (then the caller reads the file)
   */
  textIfUnchanged (file: string, sig: string): string | undefined {
    // Marked recently used (kept longer); forgotten below when no longer the file's.
    const kept = this.#texts.get(file)
    if (kept === undefined) return undefined
    let same = false
    try {
      const st = kept.sig === sig ? lstatSync(file, { throwIfNoEntry: false }) : undefined
      same = st !== undefined && st.isFile() && signatureOf(st) === sig
    } catch {}
    if (!same) { this.forget(file); return undefined }
    return kept.text
  }

  /** How many texts are kept (for tests and figures). */
  get size (): number {
    return this.#texts.size
  }

  /** The total length of the texts kept (UTF-16 code units). */
  get chars (): number {
    return this.#texts.weight
  }
}
