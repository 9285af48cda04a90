/**
 * Serves the inline editor's assets under `/__cms/`: `bootstrap.js` (the API base and admin paths
 * prepended, so a site's script tag needs no configuration), `editor.js` and `editor.css` from
 * dist/browser/. With `enableInlineEditor: false` these paths are passed on.
 */
import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { Middleware } from 'koa'
import { sendAsset } from './send-asset.js'
import type { Services } from '../services.js'
import { NotFoundError } from '../errors.js'

/** The URL prefix of the editor assets. */
export const EDITOR_ASSET_PREFIX = '/__cms/'

const ASSETS: ReadonlyMap<string, string> = new Map([
  ['bootstrap.js', 'text/javascript; charset=utf-8'],
  ['editor.js', 'text/javascript; charset=utf-8'],
  ['editor.css', 'text/css; charset=utf-8']
])

/**
 * Where the bundled assets are: next to the compiled file (`dist/lib/http/` -> `dist/browser/`),
 * or, when running from the TypeScript sources (tests), `lib/http/` -> `dist/browser/`.
 */
export function editorAssetDir (): string | null {
  const candidates = ['../../browser/', '../../dist/browser/'].map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  return candidates.find(dir => existsSync(path.join(dir, 'bootstrap.js'))) ?? null
}

/** The line bootstrap.js starts with: the API base path as a JavaScript string literal. */
export function apiBaseStatement (apiBasePath: string): string {
  // JSON is a valid JS string literal; `<` is escaped too so the line is also safe inside a <script>.
  return `window.__CMS_API__=${JSON.stringify(apiBasePath).replace(/</g, '\\u003c')};\n`
}

/** The line telling bootstrap.js where the sign-in page is (its "Sign in to edit" link). */
function adminPathStatement (mountPath: string): string {
  return `window.__CMS_ADMIN__=${JSON.stringify(mountPath).replace(/</g, '\\u003c')};\n`
}

/** Builds the middleware serving `/__cms/bootstrap.js`, `/__cms/editor.js` and `/__cms/editor.css`. */
export function editorAssetsMiddleware (services: Services): Middleware {
  const { enableInlineEditor, apiBasePath, enableAdmin } = services.config
  const prelude = apiBaseStatement(apiBasePath) + (enableAdmin ? adminPathStatement(services.config.mountPath.replace(/\/+$/, '')) : '')
  const dir = editorAssetDir()
  return async (ctx, next) => {
    const name = ctx.path.startsWith(EDITOR_ASSET_PREFIX) ? ctx.path.slice(EDITOR_ASSET_PREFIX.length) : ''
    const type = ASSETS.get(name)
    if (!enableInlineEditor || type === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) { await next(); return }
    if (dir === null) throw new NotFoundError('The editor assets are not built (run npm run build)')
    let bytes = await readFile(path.join(dir, name))
    if (name === 'bootstrap.js') bytes = Buffer.concat([Buffer.from(prelude), bytes])
    sendAsset(ctx, bytes, type)
  }
}
