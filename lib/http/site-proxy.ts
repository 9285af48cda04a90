/**
 * `serve --proxy <url>` and `serve --site <dir>`: the site beside the API on one origin, git-cms's own
 * routes first. HTML pages get the bootstrap script and, for a signed-in editor, an unmarked page's
 * body element gets `data-cms-md` (page-match.ts), inserted in the bytes: every other byte stays.
 * A dev server is forwarded to with Node's http client: method, headers and streamed body go on with
 * the upstream's Host, the session cookie never leaves, a redirect to the upstream comes back as a
 * path on ours; WebSocket upgrades (live reload) are piped both ways.
 */
import { createReadStream } from 'node:fs'
import { readFile, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import http, { type IncomingMessage, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import https from 'node:https'
import { Readable, type Duplex } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import type { Context, Middleware } from 'koa'
import type { Config } from '../config.js'
import type { Services } from '../services.js'
import { BadGatewayError, ForbiddenError } from '../errors.js'
import { SESSION_COOKIE_NAME } from '../auth/session-cookie.js'
import { isInside } from '../storage/safe-path.js'
import { EDITOR_ASSET_PREFIX } from './admin-routes.js'
import { fromHtml } from 'hast-util-from-html'
import { matchPage } from './page-match.js'

/** Where the site comes from: a running dev server's origin, or a built folder's real path. */
type SiteSource = { proxy: URL } | { folder: string }

/** Response headers that no longer describe a page once it is changed. */
const STALE_WHEN_CHANGED = ['content-length', 'content-encoding', 'etag', 'last-modified', 'content-md5', 'accept-ranges']

/** Whether a path is one of git-cms's own routes (never passed to the site). */
function isOwnPath (config: Config, urlPath: string): boolean {
  const under = (prefix: string): boolean => urlPath === prefix || urlPath.startsWith(prefix === '/' ? '/' : prefix + '/')
  return under(config.apiBasePath) || (config.enableAdmin && under(config.mountPath)) || urlPath.startsWith(EDITOR_ASSET_PREFIX) || urlPath === EDITOR_ASSET_PREFIX.slice(0, -1)
}

/** The site as a Koa middleware, mounted after git-cms's own routes. */
export function siteMiddleware (services: Services, source: SiteSource): Middleware {
  return async (ctx, next) => {
    if (isOwnPath(services.config, ctx.path)) { await next(); return }
    if ('proxy' in source) await fromUpstream(ctx, services, source.proxy)
    else await fromFolder(ctx, services, source.folder, next)
  }
}

async function fromUpstream (ctx: Context, services: Services, upstream: URL): Promise<void> {
  const res = await forwardRequest(ctx.req, upstream)
  const headers = responseHeaders(res.headers, upstream)
  const contentType = res.headers['content-type']
  if (ctx.method === 'HEAD' || !isHtml(contentType) || !services.config.enableInlineEditor) {
    if (isHtml(contentType) && services.config.enableInlineEditor) delete headers['content-length']
    sendRaw(ctx, res.statusCode ?? 502, headers, res)
    return
  }
  const read = await readUpTo(res, MAX_PAGE_BYTES)
  const page = 'bytes' in read ? await decodeBody(read.bytes, res.headers['content-encoding']) : null
  if (page === null) {
    sendRaw(ctx, res.statusCode ?? 502, headers, 'bytes' in read ? [read.bytes] : read.stream)
    return
  }
  await sendPage(ctx, services, res.statusCode ?? 200, headers, page)
}

async function fromFolder (ctx: Context, services: Services, root: string, next: () => Promise<unknown>): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') { await next(); return }
  const found = await findSiteFile(root, ctx.path)
  if (found === null) { await next(); return }
  if ('refused' in found) throw new ForbiddenError('This path is not part of the site')
  if ('redirect' in found) {
    ctx.status = 301
    ctx.redirect(found.redirect + (ctx.querystring === '' ? '' : `?${ctx.querystring}`))
    return
  }
  ctx.type = path.extname(found.file) || 'application/octet-stream'
  const headers: OutgoingHttpHeaders = { 'content-type': ctx.response.get('Content-Type'), 'cache-control': 'no-cache' }
  if (isHtml(String(headers['content-type'])) && services.config.enableInlineEditor && found.size <= MAX_PAGE_BYTES) {
    if (ctx.method === 'HEAD') { sendRaw(ctx, found.status, headers, []); return }
    await sendPage(ctx, services, found.status, headers, await readFile(found.file))
    return
  }
  headers['content-length'] = found.size
  sendRaw(ctx, found.status, headers, ctx.method === 'HEAD' ? [] : createReadStream(found.file))
}

/** Sends a page with the bootstrap tag, and the body attribute for a signed-in editor. */
async function sendPage (ctx: Context, services: Services, status: number, headers: OutgoingHttpHeaders, page: Buffer): Promise<void> {
  let attribute: { at: number, text: string } | null = null
  if (await services.auth.identify(ctx) !== null) {
    // The page is the site's either way: a failed match (an index that cannot be built) only leaves it unmarked.
    const match = await matchPage(services, ctx.path, fromHtml(page.toString('utf8'))).catch((err: unknown) => {
      services.log.warn({ err, path: ctx.path }, 'cannot match the page to an entry')
      return null
    })
    if (match !== null) {
      attribute = { at: match.body.attributeAt, text: bodyAttribute(match.collection, match.id) }
      services.log.debug({ path: ctx.path, collection: match.collection, id: match.id, by: match.by, score: match.body.score }, 'page matched to an entry')
    }
  }
  for (const name of STALE_WHEN_CHANGED) delete headers[name]
  ctx.status = status
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) ctx.set(name, typeof value === 'number' ? String(value) : value)
  // The page differs signed in and out: caches must ask again, per cookie.
  ctx.set('Cache-Control', 'no-cache')
  ctx.vary('Cookie')
  ctx.body = injectIntoPage(page, attribute)
}

/** Sends a status, headers and body as they are, past Koa's own body handling. */
function sendRaw (ctx: Context, status: number, headers: OutgoingHttpHeaders, body: Readable | AsyncIterable<Buffer> | Buffer[]): void {
  ctx.respond = false
  ctx.res.writeHead(status, headers)
  const source = body instanceof Readable ? body : Readable.from(body)
  if (ctx.method === 'HEAD' || status === 204 || status === 304) {
    ctx.res.end()
    source.destroy()
    return
  }
  // A client that leaves stops the upstream's body too (pipeline destroys both ends).
  pipeline(source, ctx.res).catch(() => {})
}

/** The tag inserted into every HTML page. */
const BOOTSTRAP_TAG = `<script src="${EDITOR_ASSET_PREFIX}bootstrap.js" defer></script>`

/** Pages larger than this (as sent, and decompressed) are passed on unchanged. */
const MAX_PAGE_BYTES = 16 * 1024 * 1024

const DECODERS: Record<string, (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress)
}

/** Whether a response is an HTML page. */
function isHtml (contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*text\/html\s*(;|$)/i.test(contentType)
}

/** Reads a stream up to `limit` bytes; a longer body comes back as an untouched stream instead. */
async function readUpTo (stream: Readable, limit: number): Promise<{ bytes: Buffer } | { stream: AsyncIterable<Buffer> }> {
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
async function decodeBody (bytes: Buffer, encoding: string | undefined): Promise<Buffer | null> {
  const name = (encoding ?? 'identity').trim().toLowerCase()
  if (name === 'identity' || name === '') return bytes
  const decode = DECODERS[name]
  if (decode === undefined) return null
  return await decode(bytes, { maxOutputLength: MAX_PAGE_BYTES }).catch(() => null)
}

/** The page with the bootstrap tag (unless it already includes bootstrap.js) and an optional attribute inserted. */
function injectIntoPage (page: Buffer, attribute: { at: number, text: string } | null): Buffer {
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
  const parts: Buffer[] = []
  let at = 0
  for (const { byte, text } of inserts.sort((a, b) => a.byte - b.byte)) {
    parts.push(page.subarray(at, byte), Buffer.from(text))
    at = byte
  }
  return Buffer.concat([...parts, page.subarray(at)])
}

/** The `data-cms-md` attribute naming an entry's body, escaped for a double-quoted attribute. */
function bodyAttribute (collection: string, id: string): string {
  const value = `${collection}/${id}#body`.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  return ` data-cms-md="${value}"`
}

type SiteLookup = { file: string, size: number, status: 200 | 404 } | { redirect: string } | { refused: true } | null

/** Checks the `--site` folder and gives its real path; rejects when it is not a readable folder. */
export async function siteFolder (dir: string): Promise<string> {
  const real = await realpath(path.resolve(dir)).catch(() => { throw new Error(`--site: no such folder '${dir}'`) })
  if (!(await stat(real)).isDirectory()) throw new Error(`--site: '${dir}' is not a folder`)
  return real
}

/**
 * The file a request path (still percent-encoded) names, else a folder's `index.html` (a redirect adds its `/`),
 * else `<path>.html`, else `404.html`; a path out of the folder (even by a symbolic link) or hidden is refused.
 */
async function findSiteFile (root: string, urlPath: string): Promise<SiteLookup> {
  let decoded: string
  try { decoded = decodeURIComponent(urlPath) } catch { return { refused: true } }
  // eslint-disable-next-line no-control-regex
  if (!decoded.startsWith('/') || /[\u0000-\u001f\\]/.test(decoded)) return { refused: true }
  const segments = decoded.split('/').slice(1)
  if (segments.some(s => s.startsWith('.'))) return { refused: true }
  const target = path.join(root, ...segments)
  const found = await fileAt(root, target)
  if (found === 'outside') return { refused: true }
  if (found === 'folder') {
    if (!decoded.endsWith('/')) return { redirect: `${urlPath}/` }
    const index = await fileAt(root, path.join(target, 'index.html'))
    if (isFile(index)) return { ...index, status: 200 }
  } else if (found !== null) {
    return { ...found, status: 200 }
  } else if (!decoded.endsWith('/') && path.extname(target) === '') {
    const page = await fileAt(root, `${target}.html`)
    if (isFile(page)) return { ...page, status: 200 }
  }
  const notFound = await fileAt(root, path.join(root, '404.html'))
  return isFile(notFound) ? { ...notFound, status: 404 } : null
}

type Found = { file: string, size: number } | 'folder' | 'outside' | null

function isFile (found: Found): found is { file: string, size: number } {
  return found !== null && typeof found === 'object'
}

/** A regular file or folder at a path, checked to be really inside the root (symbolic links resolved). */
async function fileAt (root: string, target: string): Promise<Found> {
  let real: string
  try { real = await realpath(target) } catch { return null }
  if (!isInside(root, real)) return 'outside'
  const st = await stat(real)
  if (st.isDirectory()) return 'folder'
  return st.isFile() ? { file: real, size: st.size } : null
}

/** Headers of one connection only (RFC 9110 section 7.6.1), never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'])

/** How long an upstream may take to start answering. */
const UPSTREAM_TIMEOUT_MS = 30_000

/** Parses and checks the `--proxy` address; gives its origin (path, query and fragment dropped). */
export function upstreamOrigin (value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : null
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new Error(`--proxy needs an http:// or https:// address, got '${value}'`)
  if (url.username !== '' || url.password !== '') throw new Error('--proxy takes no user name or password')
  return new URL(url.origin)
}

/** Sends a request on to the upstream and resolves with its response (body not yet read); BadGatewayError when unreachable. */
async function forwardRequest (req: IncomingMessage, upstream: URL): Promise<IncomingMessage> {
  const client = upstream.protocol === 'https:' ? https : http
  return await new Promise<IncomingMessage>((resolve, reject) => {
    const out = client.request(upstream, {
      method: req.method,
      path: req.url ?? '/',
      headers: forwardedHeaders(req.headers, upstream),
      timeout: UPSTREAM_TIMEOUT_MS
    }, resolve)
    out.on('timeout', () => { out.destroy(new Error('no answer in time')) })
    out.on('error', (err) => { reject(new BadGatewayError(`The site at ${upstream.origin} did not answer: ${err.message}`)) })
    req.on('aborted', () => { out.destroy() })
    if (req.method === 'GET' || req.method === 'HEAD') out.end()
    else req.pipe(out)
  })
}

/**
 * The response headers to send on: hop-by-hop ones dropped, a `Location` on the upstream's origin
 * made a path on ours.
 */
function responseHeaders (headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const out = endToEnd(headers)
  if (typeof headers.location === 'string') {
    try {
      const target = new URL(headers.location, upstream)
      if (target.origin === upstream.origin) out.location = target.pathname + target.search + target.hash
    } catch {}
  }
  return out
}

/**
 * Handles an HTTP upgrade (a WebSocket of the dev server's live reload): the same request goes to
 * the upstream, and once it switches protocols the two sockets are piped together.
 */
export function upgradeForwarder (upstream: URL, config: Config): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const client = upstream.protocol === 'https:' ? https : http
  return (req, socket, head) => {
    socket.on('error', () => { socket.destroy() })
    if (isOwnPath(config, new URL(req.url ?? '/', 'http://x').pathname)) { socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n'); return }
    const headers = forwardedHeaders(req.headers, upstream)
    headers.connection = 'Upgrade'
    headers.upgrade = req.headers.upgrade ?? 'websocket'
    const out = client.request(upstream, { method: req.method, path: req.url ?? '/', headers })
    out.on('upgrade', (res, upstreamSocket, upstreamHead) => {
      const lines = [`HTTP/1.1 ${res.statusCode ?? 101} ${res.statusMessage ?? 'Switching Protocols'}`]
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i] ?? ''}: ${res.rawHeaders[i + 1] ?? ''}`)
      socket.write(lines.join('\r\n') + '\r\n\r\n')
      if (upstreamHead.length > 0) socket.write(upstreamHead)
      if (head.length > 0) upstreamSocket.write(head)
      upstreamSocket.on('error', () => { socket.destroy() })
      socket.on('close', () => { upstreamSocket.destroy() })
      upstreamSocket.on('close', () => { socket.destroy() })
      upstreamSocket.pipe(socket).pipe(upstreamSocket)
    })
    out.on('response', (res) => {
      // The upstream refused the upgrade: its answer goes back as is, then the connection closes.
      socket.end(`HTTP/1.1 ${res.statusCode ?? 502} ${res.statusMessage ?? ''}\r\nConnection: close\r\n\r\n`)
      res.resume()
    })
    out.on('error', () => { socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n') })
    out.end()
  }
}

/** The request headers to send on: hop-by-hop ones and git-cms's session cookie dropped, Host the upstream's. */
function forwardedHeaders (headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const out = endToEnd(headers)
  out.host = upstream.host
  if (typeof headers.cookie === 'string') {
    const kept = headers.cookie.split(/;\s*/).filter(pair => pair.split('=')[0]?.trim() !== SESSION_COOKIE_NAME)
    if (kept.length > 0) out.cookie = kept.join('; ')
    else delete out.cookie
  }
  return out
}

/** The headers without the hop-by-hop ones. */
function endToEnd (headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name)))
}
