/**
 * The small script a site includes (`<script src="/__cms/bootstrap.js">`): when the page has a
 * `data-cms` or `data-cms-md` element and the visitor is a signed-in editor, it loads the inline
 * editor (`editor.js` and `editor.css` next to this script). Otherwise it loads nothing else.
 * The server prepends `window.__CMS_API__ = "<apiBasePath>"`.
 */

type CmsWindow = Window & { __CMS_API__?: string }

// A classic script shares the page's global scope: keep every name inside this function.
(() => {
  const SELECTOR = '[data-cms],[data-cms-md]'
  // The assets live next to this script, so a site that mounts the service under a prefix still works.
  const script = document.currentScript as HTMLScriptElement | null
  const assetBase = script?.src !== undefined && script.src !== '' ? new URL('.', script.src).href : '/__cms/'

  async function start (): Promise<void> {
    if (document.querySelector(SELECTOR) === null) return
    const api = (window as CmsWindow).__CMS_API__ ?? '/api/cms'
    let session: { authenticated?: unknown } | null = null
    try {
      const res = await fetch(`${api}/auth/session`, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      if (res.ok) session = await res.json() as { authenticated?: unknown }
    } catch {
      return
    }
    if (session?.authenticated !== true) return
    const css = document.createElement('link')
    css.rel = 'stylesheet'
    css.href = assetBase + 'editor.css'
    document.head.appendChild(css)
    const editor = document.createElement('script')
    editor.type = 'module'
    editor.src = assetBase + 'editor.js'
    document.head.appendChild(editor)
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => { void start() })
  else void start()
})()
