/**
 * Serves dist/browser/: the inline editor's assets under `/__cms/`, and the Studio under `mountPath`:
 * one HTML shell whose settings (`StudioConfig`) sit in a JSON block, as the CSP allows no inline script.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { Context, Middleware } from 'koa'
import type { Services } from '../services.js'
import { NotFoundError } from '../errors.js'
import { safeRedirectTarget } from '../auth/redirect-target.js'

/** studio.js, studio.css and the split bundle's chunks (group 1; scripts/build-browser.mjs), loaded by studio.js when a page needs them. */
const STUDIO_ASSET = /^studio(?:\.css|(-[A-Za-z0-9_-]+)?\.js)$/

/** The Content-Type of a built asset, by its extension (.js or .css). */
function assetType (name: string): string {
  return name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8'
}

/** Cache-Control of an asset whose URL names its content (chunk hash, `?v=`): a warm start skips two rounds of 304s. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/** The version of a built asset for its URL: its modification time and size, so a rebuild gives a new URL. */
async function assetVersion (dir: string | null, name: string): Promise<string> {
  if (dir === null) return ''
  return await stat(path.join(dir, name)).then(st => `${Math.round(st.mtimeMs).toString(36)}${st.size.toString(36)}`, () => '')
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-NONCE'; img-src 'self' data: blob:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** Renders the HTML shell. */
function studioShell (config: { mountPath: string, [setting: string]: unknown }, versions: { js: string, css: string }): string {
  // `<` escaped so the JSON can never close its <script> element.
  const json = JSON.stringify(config).replace(/</g, '\\u003c')
  const base = config.mountPath
  const v = (version: string): string => version === '' ? '' : `?v=${version}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>git-cms Studio</title>
<link rel="stylesheet" href="${base}/assets/studio.css${v(versions.css)}">
<script type="module" src="${base}/assets/studio.js${v(versions.js)}"></script>
</head>
<body>
<script type="application/json" id="cms-studio-config">${json}</script>
<div id="studio"><noscript>The Studio needs JavaScript.</noscript></div>
</body>
</html>
`
}

/** Whether a path (relative to the mount path) is one of the Studio's pages. */
function isPage (rest: string): boolean {
  return /^(\/?|\/cms\/?|\/cms\/[^/]+\/?|\/cms\/[^/]+\/[^/]+\/?)$/.test(rest)
}

/** Builds the middleware serving the Studio. */
export function adminMiddleware (services: Services): Middleware {
  const { enableAdmin, apiBasePath } = services.config
  const mountPath = services.config.mountPath.replace(/\/+$/, '')
  return async (ctx, next) => {
    if (!enableAdmin || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) { await next(); return }
    if (ctx.path !== mountPath && !ctx.path.startsWith(mountPath + '/')) { await next(); return }
    const rest = ctx.path.slice(mountPath.length)
    if (rest.startsWith('/assets/')) {
      const name = rest.slice('/assets/'.length)
      const asset = STUDIO_ASSET.exec(name)
      if (asset === null) { await next(); return }
      const dir = browserAssetDir('studio.js')
      if (dir === null) throw new NotFoundError('The Studio is not built (run npm run build)')
      // A chunk of another build (an old page asking after an upgrade) is not found, not a failure.
      if (!existsSync(path.join(dir, name))) throw new NotFoundError(`No Studio asset ${name}`)
      const named = asset[1] !== undefined || typeof ctx.query.v === 'string'
      await sendBuiltAsset(ctx, dir, name, assetType(name), named ? IMMUTABLE : 'no-cache')
      return
    }
    if (!isPage(rest)) { await next(); return }
    // The media library's index is built in the background once someone opens the Studio.
    services.media.ready().catch((err: Error) => services.log.warn({ err }, 'could not build the media index'))
    const collections = (await services.content.registry.list()).map(c => ({
      name: c.name,
      ...c.metadata,
      format: c.format,
      listFields: c.listFields,
      titleField: c.titleField,
      url: services.config.collections[c.name]?.url ?? null
    }))
    const styleNonce = randomBytes(18).toString('base64')
    const dir = browserAssetDir('studio.js')
    const versions = { js: await assetVersion(dir, 'studio.js'), css: await assetVersion(dir, 'studio.css') }
    const body = studioShell({
      apiBasePath,
      mountPath,
      authMode: services.auth.mode,
      // From a site's "Sign in to edit" (`?return=/page`): the provider sends the editor back there.
      loginUrl: services.auth.loginUrl(typeof ctx.query.return === 'string' ? safeRedirectTarget(ctx.query.return) : mountPath + '/cms'),
      collections,
      drafts: services.auth.authorizer.active,
      previewStylesheets: services.config.preview.stylesheets,
      styleNonce
    }, versions)
    ctx.set('Cache-Control', 'no-store')
    ctx.set('Content-Security-Policy', CSP.replace('NONCE', styleNonce))
    ctx.set('X-Frame-Options', 'DENY')
    ctx.set('Referrer-Policy', 'same-origin')
    ctx.type = 'text/html; charset=utf-8'
    ctx.status = 200
    ctx.body = body
  }
}

/** The encodings the build writes beside a Studio asset (scripts/build-browser.mjs), best first. */
const PRECOMPRESSED = [['br', '.br'], ['gzip', '.gz']] as const

/** Where the bundled browser code is (the folder holding `marker`): `dist/browser/` from `dist/lib/http/` or `lib/http/`. */
export function browserAssetDir (marker: 'studio.js' | 'bootstrap.js'): string | null {
  const candidates = ['../../browser/', '../../dist/browser/'].map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  return candidates.find(dir => existsSync(path.join(dir, marker))) ?? null
}

/** Answers with the asset's bytes (or `encoded`, with its own ETag), or 304 when the client's ETag matches. */
function sendAsset (ctx: Context, bytes: Buffer, type: string, encoded?: { encoding: string, bytes: Buffer }, cacheControl = 'no-cache'): void {
  ctx.set('Cache-Control', cacheControl)
  ctx.set('X-Content-Type-Options', 'nosniff')
  const tag = createHash('sha256').update(bytes).digest('base64url').slice(0, 27)
  ctx.etag = encoded === undefined ? tag : `${tag}-${encoded.encoding}`
  ctx.type = type
  ctx.status = 200
  if (ctx.fresh) { ctx.status = 304; return }
  if (encoded !== undefined) ctx.set('Content-Encoding', encoded.encoding)
  // Koa sends only the headers (with the length) for HEAD.
  ctx.body = encoded?.bytes ?? bytes
}

/** Answers with a built asset, or the `.br`/`.gz` file the build wrote beside it when accepted and not older. */
async function sendBuiltAsset (ctx: Context, dir: string, name: string, type: string, cacheControl: string): Promise<void> {
  const file = path.join(dir, name)
  const [bytes, built] = await Promise.all([readFile(file), stat(file)])
  ctx.vary('Accept-Encoding')
  // Brotli whenever accepted (browsers list it after gzip, at the same weight).
  const chosen = PRECOMPRESSED.find(([encoding]) => ctx.acceptsEncodings(encoding) === encoding)
  const compressed = chosen === undefined
    ? null
    : await stat(file + chosen[1]).then(async st => st.mtimeMs >= built.mtimeMs ? await readFile(file + chosen[1]) : null, () => null)
  sendAsset(ctx, bytes, type, chosen !== undefined && compressed !== null ? { encoding: chosen[0], bytes: compressed } : undefined, cacheControl)
}

/** The URL prefix of the editor assets. */
export const EDITOR_ASSET_PREFIX = '/__cms/'

const EDITOR_ASSET = /^(?:bootstrap\.js|editor\.(?:js|css))$/

/**
 * A line of bootstrap.js setting `window.__CMS_API__` (the API base path) or `__CMS_ADMIN__` (the
 * sign-in page): a JSON string literal with `<` escaped, so it is safe inside a <script> too.
 */
export function globalStatement (name: '__CMS_API__' | '__CMS_ADMIN__', value: string): string {
  return `window.${name}=${JSON.stringify(value).replace(/</g, '\\u003c')};\n`
}

/** Builds the middleware serving `/__cms/bootstrap.js`, `/__cms/editor.js` and `/__cms/editor.css`. */
export function editorAssetsMiddleware (services: Services): Middleware {
  const { enableInlineEditor, apiBasePath, enableAdmin } = services.config
  const prelude = globalStatement('__CMS_API__', apiBasePath) + (enableAdmin ? globalStatement('__CMS_ADMIN__', services.config.mountPath.replace(/\/+$/, '')) : '')
  const dir = browserAssetDir('bootstrap.js')
  return async (ctx, next) => {
    const name = ctx.path.startsWith(EDITOR_ASSET_PREFIX) ? ctx.path.slice(EDITOR_ASSET_PREFIX.length) : ''
    if (!enableInlineEditor || !EDITOR_ASSET.test(name) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) { await next(); return }
    if (dir === null) throw new NotFoundError('The editor assets are not built (run npm run build)')
    let bytes = await readFile(path.join(dir, name))
    if (name === 'bootstrap.js') bytes = Buffer.concat([Buffer.from(prelude), bytes])
    sendAsset(ctx, bytes, assetType(name))
  }
}
