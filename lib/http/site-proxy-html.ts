/**
 * The one change `serve --proxy`/`--site` makes to HTML pages: the bootstrap script before the last
 * `</body>`, and for a signed-in editor `data-cms-md` on the element holding the entry body. Insertions
 * are made in the bytes, not a re-serialized document, so every other byte stays the page's own.
 */
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import type { Readable } from 'node:stream'
import { EDITOR_ASSET_PREFIX } from './editor-assets.js'

/** The tag inserted into every HTML page. */
const BOOTSTRAP_TAG = `<script src="${EDITOR_ASSET_PREFIX}bootstrap.js" defer></script>`

/** Pages larger than this (as sent, and decompressed) are passed on unchanged. */
export const MAX_PAGE_BYTES = 16 * 1024 * 1024

const DECODERS: Record<string, (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress)
}

/** Whether a response is an HTML page. */
export function isHtml (contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*text\/html\s*(;|$)/i.test(contentType)
}

/** Reads a stream up to `limit` bytes; a longer body comes back as an untouched stream instead. */
export async function readUpTo (stream: Readable, limit: number): Promise<{ bytes: Buffer } | { stream: AsyncIterable<Buffer> }> {
  const chunks: Buffer[] = []
  let size = 0
  const iterator = stream[Symbol.asyncIterator]()
  for (;;) {
    const { value, done } = await iterator.next() as IteratorResult<Buffer>
    if (done === true) return { bytes: Buffer.concat(chunks, size) }
    chunks.push(value)
    size += value.length
    if (size > limit) {
      return {
        stream: (async function * () {
          yield * chunks
          for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value as Buffer
        })()
      }
    }
  }
}

/** Decompresses a page as its Content-Encoding says; null for an unknown encoding or a body that does not decode. */
export async function decodeBody (bytes: Buffer, encoding: string | undefined): Promise<Buffer | null> {
  const name = (encoding ?? 'identity').trim().toLowerCase()
  if (name === 'identity' || name === '') return bytes
  const decode = DECODERS[name]
  if (decode === undefined) return null
  try {
    return await decode(bytes, { maxOutputLength: MAX_PAGE_BYTES })
  } catch {
    return null
  }
}

/**
 * The page with the bootstrap tag (unless it already includes bootstrap.js) and an optional
 * attribute inserted.
 */
export function injectIntoPage (page: Buffer, attribute: { at: number, text: string } | null): Buffer {
  const latin1 = page.toString('latin1')
  const inserts: Array<{ byte: number, text: string }> = []
  if (!latin1.includes(`${EDITOR_ASSET_PREFIX}bootstrap.js`)) {
    let bodyEnd = -1
    for (const m of latin1.matchAll(/<\/body[\s>]/gi)) bodyEnd = m.index
    inserts.push({ byte: bodyEnd < 0 ? page.length : bodyEnd, text: BOOTSTRAP_TAG })
  }
  if (attribute !== null) {
    const text = page.toString('utf8')
    // Offsets of the decoded text are bytes only when the page is valid UTF-8 (it round-trips).
    if (Buffer.byteLength(text) === page.length) inserts.push({ byte: Buffer.byteLength(text.slice(0, attribute.at)), text: attribute.text })
  }
  inserts.sort((a, b) => b.byte - a.byte)
  const parts: Buffer[] = []
  let end = page.length
  for (const { byte, text } of inserts) {
    parts.unshift(Buffer.from(text), page.subarray(byte, end))
    end = byte
  }
  parts.unshift(page.subarray(0, end))
  return Buffer.concat(parts)
}

/** The `data-cms-md` attribute naming an entry's body, escaped for a double-quoted attribute. */
export function bodyAttribute (collection: string, id: string): string {
  const value = `${collection}/${id}#body`.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  return ` data-cms-md="${value}"`
}
