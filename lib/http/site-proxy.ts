/**
 * `serve --proxy <url>` and `serve --site <dir>`: the site beside the API on one origin. Requests
 * git-cms does not answer go to the site (dev server or built folder); its own routes never do. HTML
 * pages get the bootstrap script, and for a signed-in editor an unmarked page is matched to its entry
 * (page-match.ts) and its body element gets `data-cms-md`.
 */
import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { OutgoingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Context, Middleware } from 'koa'
import type { Config } from '../config.js'
import type { Services } from '../services.js'
import { ForbiddenError } from '../errors.js'
import { EDITOR_ASSET_PREFIX } from './editor-assets.js'
import { forwardRequest, responseHeaders } from './site-proxy-upstream.js'
import { bodyAttribute, decodeBody, injectIntoPage, isHtml, MAX_PAGE_BYTES, readUpTo } from './site-proxy-html.js'
import { findSiteFile } from './static-site.js'
import { fromHtml } from 'hast-util-from-html'
import { hasEditorBinding } from './page-match-element.js'
import { matchPage } from './page-match.js'

/** Where the site comes from: a running dev server's origin, or a built folder's real path. */
type SiteSource = { proxy: URL } | { folder: string }

/** Response headers that no longer describe a page once it is changed. */
const STALE_WHEN_CHANGED = ['content-length', 'content-encoding', 'etag', 'last-modified', 'content-md5', 'accept-ranges']

/** Whether a path is one of git-cms's own routes (never passed to the site). */
export function isOwnPath (config: Config, urlPath: string): boolean {
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
    const tree = fromHtml(page.toString('utf8'))
    if (!hasEditorBinding(tree)) {
      // The page is the site's either way: a failed match (an index that cannot be built) only leaves it unmarked.
      const match = await matchPage(services, ctx.path, tree).catch((err: unknown) => {
        services.log.warn({ err, path: ctx.path }, 'cannot match the page to an entry')
        return null
      })
      if (match !== null) {
        attribute = { at: match.body.attributeAt, text: bodyAttribute(match.collection, match.id) }
        services.log.debug({ path: ctx.path, collection: match.collection, id: match.id, by: match.by, score: match.body.score }, 'page matched to an entry')
      }
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
