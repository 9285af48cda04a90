/**
 * The body preview in the site's own look (`preview.stylesheets`, CONTRACT 16): the server's sanitized
 * HTML in a frame linking the site's stylesheets, so neither CSS leaks into the other. The frame is
 * sandboxed without `allow-scripts` and inherits the Studio's Content-Security-Policy, so it loads
 * only from the Studio's origin (the site git-cms serves or sits beside).
 */
import type { JSX } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

/** The frame's document: the stylesheets' links and an empty body the preview is written into. */
function frameDocument (stylesheets: string[]): string {
  const attr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  return '<!doctype html><html><head><meta charset="utf-8">' +
    stylesheets.map(href => `<link rel="stylesheet" href="${attr(href)}">`).join('') +
    '</head><body></body></html>'
}

/** The preview's props. */
interface SitePreviewProps {
  /** The field's label: the frame is titled "<label> preview". */
  label: string
  /** The server's sanitized rendering of the body. */
  html: string
  stylesheets: string[]
}

/** A rendering shown in a sandboxed frame with the site's stylesheets. */
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
