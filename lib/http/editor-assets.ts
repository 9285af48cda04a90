/**
 * Serves the inline editor's assets under `/__cms/`: `bootstrap.js` (the API base and admin paths
 * prepended, so a site's script tag needs no configuration), `editor.js` and `editor.css` from
 * dist/browser/. With `enableInlineEditor: false` these paths are passed on.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Middleware } from 'koa'
import { browserAssetDir, sendAsset } from './admin-routes.js'
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
 * A line of bootstrap.js setting `window.<name>` (`__CMS_API__`: the API base path; `__CMS_ADMIN__`:
 * the sign-in page of its "Sign in to edit" link). JSON is a valid JS string literal; `<` is escaped
 * too so the line is also safe inside a <script>.
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
    const type = ASSETS.get(name)
    if (!enableInlineEditor || type === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) { await next(); return }
    if (dir === null) throw new NotFoundError('The editor assets are not built (run npm run build)')
    let bytes = await readFile(path.join(dir, name))
    if (name === 'bootstrap.js') bytes = Buffer.concat([Buffer.from(prelude), bytes])
    sendAsset(ctx, bytes, type)
  }
}
