/**
 * Serves the Studio under `config.mountPath` (default `/admin`): one HTML shell for its pages (the
 * browser routes between them) and the bundled assets from dist/browser/. The shell carries its
 * settings in a JSON block because the Content-Security-Policy allows no inline script. With
 * `enableAdmin: false` nothing is served.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { Middleware } from 'koa'
import { browserAssetDir, sendBuiltAsset } from './send-asset.js'
import type { Services } from '../services.js'
import { NotFoundError } from '../errors.js'
import { safeRedirectTarget } from '../auth/redirect-target.js'

/** What the Studio reads from the shell's `#cms-studio-config` block. */
interface StudioShellConfig {
  apiBasePath: string
  mountPath: string
  authMode: 'password' | 'provider'
  loginUrl: string | null
  collections: Array<{ name: string, label: string, icon: string, description: string, creatable: boolean, orderable: boolean, deletable: boolean, singletonId: string | null, nested: boolean, format: string, listFields: string[] | null, titleField: string | null, url: string | null }>
  /** Whether every edit goes to the editor's draft (a permissions policy is active). */
  drafts: boolean
  /** The site's stylesheets the body preview uses (config `preview.stylesheets`), paths on the site. */
  previewStylesheets: readonly string[]
  /** This response's CSP nonce for the style elements the Markdown editor (CodeMirror) adds. */
  styleNonce?: string
}

const ASSETS: ReadonlyMap<string, string> = new Map([
  ['studio.js', 'text/javascript; charset=utf-8'],
  ['studio.css', 'text/css; charset=utf-8']
])

/** The split bundle's chunks (scripts/build-browser.mjs), loaded by studio.js when a page needs them. */
const STUDIO_CHUNK = /^studio-[A-Za-z0-9_-]+\.js$/

/**
 * Cache-Control of an asset whose URL names its content (a chunk's hash, `?v=<version>`): a warm
 * start runs from the cache without two rounds of 304s (416 ms of first paint, measured under load).
 */
const IMMUTABLE = 'public, max-age=31536000, immutable'

/**
 * The version of a built asset for its URL: its modification time and size, so a rebuild gives a
 * new URL.
 */
async function assetVersion (dir: string | null, name: string): Promise<string> {
  if (dir === null) return ''
  return await stat(path.join(dir, name)).then(st => `${Math.round(st.mtimeMs).toString(36)}${st.size.toString(36)}`, () => '')
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-NONCE'; img-src 'self' data: blob:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** Renders the HTML shell. */
function studioShell (config: StudioShellConfig, versions: { js: string, css: string } = { js: '', css: '' }): string {
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
      const type = ASSETS.get(name) ?? (STUDIO_CHUNK.test(name) ? 'text/javascript; charset=utf-8' : undefined)
      if (type === undefined) { await next(); return }
      const dir = browserAssetDir('studio.js')
      if (dir === null) throw new NotFoundError('The Studio is not built (run npm run build)')
      // A chunk of another build (an old page asking after an upgrade) is not found, not a failure.
      if (!existsSync(path.join(dir, name))) throw new NotFoundError(`No Studio asset ${name}`)
      const named = STUDIO_CHUNK.test(name) || typeof ctx.query.v === 'string'
      await sendBuiltAsset(ctx, dir, name, type, named ? IMMUTABLE : 'no-cache')
      return
    }
    if (!isPage(rest)) { await next(); return }
    // The media library's index is built in the background once someone opens the Studio.
    services.media.ready().catch((err: Error) => services.log.warn({ err }, 'could not build the media index'))
    const collections = (await services.content.registry.list()).map(c => ({
      name: c.name,
      label: c.metadata.label,
      icon: c.metadata.icon,
      description: c.metadata.description,
      creatable: c.metadata.creatable,
      orderable: c.metadata.orderable,
      deletable: c.metadata.deletable,
      singletonId: c.metadata.singletonId,
      nested: c.nested || c.indexFile !== null,
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
