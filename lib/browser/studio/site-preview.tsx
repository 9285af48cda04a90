/**
 * The Markdown body's preview in the site's own look (config `preview.stylesheets`, CONTRACT 16): the
 * server's sanitized HTML inside a frame that links the site's stylesheets, so the site's CSS
 * styles the preview and nothing else, and the Studio's CSS stays out of it. The frame is sandboxed
 * without `allow-scripts` (nothing runs in it, whatever the HTML held) and inherits the Studio
 * page's Content-Security-Policy, so its stylesheets, fonts and images come from the Studio's own
 * origin only: the site git-cms serves (`serve --site`/`--proxy`) or sits beside.
 */
import type { JSX } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

/** @returns the site's stylesheets from the shell's settings block (paths checked at config load) */
export function siteStylesheets (): string[] {
  try {
    const list = (JSON.parse(document.getElementById('cms-studio-config')?.textContent ?? '{}') as { previewStylesheets?: unknown }).previewStylesheets
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : []
  } catch { return [] }
}

/**
 * The frame's document: the stylesheets' links and an empty body the preview is written into.
 * @param stylesheets paths on the site
 * @returns the HTML of the frame
 */
export function frameDocument (stylesheets: string[]): string {
  const attr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  return '<!doctype html><html><head><meta charset="utf-8">' +
    stylesheets.map(href => `<link rel="stylesheet" href="${attr(href)}">`).join('') +
    '</head><body></body></html>'
}

/** The preview's props. */
export interface SitePreviewProps {
  /** The field's label: the frame is titled "<label> preview". */
  label: string
  /** The server's sanitized rendering of the body. */
  html: string
  stylesheets: string[]
}

/** @param props the rendering and the stylesheets @returns the sandboxed frame */
export function SitePreview ({ label, html, stylesheets }: SitePreviewProps): JSX.Element {
  const frame = useRef<HTMLIFrameElement>(null)
  const latest = useRef(html)
  latest.current = html
  // The body is replaced in place (allow-same-origin lets the Studio reach it; scripts stay off),
  // so the frame is not reloaded, and its stylesheets not fetched again, on each keystroke. Written
  // on each change and again when the frame's document has loaded (it replaces the first one).
  const write = (): void => {
    const body = frame.current?.contentDocument?.body
    if (body != null) body.innerHTML = latest.current
  }
  useEffect(write, [html])
  return (
    <iframe ref={frame} class="md-preview-frame" title={`${label} preview`} sandbox="allow-same-origin"
      srcdoc={frameDocument(stylesheets)} onLoad={write} />
  )
}
