/**
 * The script a site includes (`/__cms/bootstrap.js`): loads the inline editor for a signed-in editor on a
 * page with bound elements, else offers "Sign in to edit" on a page opened with `#edit`.
 */

type CmsWindow = Window & { __CMS_API__?: string, __CMS_ADMIN__?: string }

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
    if (session?.authenticated !== true) { offerSignIn(); return }
    document.head.append(Object.assign(document.createElement('link'), { rel: 'stylesheet', href: assetBase + 'editor.css' }))
    document.head.append(Object.assign(document.createElement('script'), { type: 'module', src: assetBase + 'editor.js' }))
  }

  /** On a page opened with `#edit`: a link to sign in that comes back to this page. */
  function offerSignIn (): void {
    const admin = (window as CmsWindow).__CMS_ADMIN__
    if (location.hash !== '#edit' || admin === undefined) return
    const link = document.createElement('a')
    link.href = `${admin}?return=${encodeURIComponent(location.pathname + location.search)}`
    link.textContent = 'Sign in to edit'
    link.setAttribute('style', 'position:fixed;right:1rem;bottom:1rem;z-index:2147483000;padding:0.5rem 0.9rem;background:#1a5fb4;color:#fff;font:600 15px/1.4 system-ui,sans-serif;border-radius:6px;text-decoration:none')
    document.body.appendChild(link)
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => { void start() })
  else void start()
})()
