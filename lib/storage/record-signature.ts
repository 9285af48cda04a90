/**
 * Signatures of the commits of `refs/cms/*`: a `Cms-Signature:` trailer, an HMAC of the ref's name, tree
 * and parents keyed from `CMS_SESSION_SECRET`. A fetched ref is adopted only when its tip has a valid one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

const TRAILER = 'Cms-Signature: v1 '
const SIGNATURE_HEX = /^[0-9a-f]{64}$/

/** Signs and checks refs/cms commits with the site's key. */
export class RecordSigner {
  readonly #key: Buffer

  /** @param sessionSecret the site's CMS_SESSION_SECRET (the record key is derived from it) */
  constructor (sessionSecret: string) {
    this.#key = createHmac('sha256', sessionSecret).update('git-cms refs/cms record signature v1').digest()
  }

  /**
   * The message of a signed commit.
   * @param ref the full ref name (`refs/cms/drafts/ann`)
   * @param message the commit's message
   * @param tree the commit's tree
   * @param parent its parent (its parents, for a merge of two instances' histories), or null for a first commit
   * @returns the message with its signature trailer
   */
  sign (ref: string, message: string, tree: string, parent: string | readonly string[] | null): string {
    return `${message}\n\n${TRAILER}${this.#mac(ref, tree, typeof parent === 'string' ? parent : parent?.join(' ') ?? null)}`
  }

  /**
   * Whether a commit's text (as `git cat-file commit` prints it) is a record of this site on `ref`.
   * @param ref the full ref name the commit is the tip of
   * @param commitText the raw commit object
   * @returns true when it has a valid signature for that ref (over its tree and every parent)
   */
  verify (ref: string, commitText: string): boolean {
    const headerEnd = commitText.indexOf('\n\n')
    if (headerEnd < 0) return false
    const headers = commitText.slice(0, headerEnd).split('\n')
    const tree = headers.find(h => h.startsWith('tree '))?.slice(5)
    const parents = headers.filter(h => h.startsWith('parent ')).map(h => h.slice(7))
    if (tree === undefined) return false
    const lines = commitText.slice(headerEnd + 2).trimEnd().split('\n')
    const last = lines[lines.length - 1] ?? ''
    if (!last.startsWith(TRAILER)) return false
    const given = last.slice(TRAILER.length)
    if (!SIGNATURE_HEX.test(given)) return false
    return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(this.#mac(ref, tree, parents.length === 0 ? null : parents.join(' ')), 'hex'))
  }

  #mac (ref: string, tree: string, parent: string | null): string {
    return createHmac('sha256', this.#key).update(`${ref}\n${tree}\n${parent ?? ''}`).digest('hex')
  }
}
