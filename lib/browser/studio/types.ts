import { useEffect } from 'preact/hooks'
import type { CollectionMetadata } from '../../content/command-schema-table.js'
/** Settings and shared shapes of the Studio. */

/** One collection as the shell lists it. */
export interface StudioCollection extends Required<Omit<CollectionMetadata, 'order'>> {
  name: string
  /** The entry format (`md`, `mdx`, `json`, ...): md and mdx bodies get the Markdown editor. */
  format?: string
  /** Columns of the list (config `listFields`); null: title and date when present. */
  listFields?: string[] | null
  /** The field that titles an entry (config `titleField`), asked first for a new entry. */
  titleField?: string | null
  /** Where the site shows an entry (config `url`, e.g. `/posts/{slug}/`): "View on site". */
  url?: string | null
}

/** What the server embeds in `#cms-studio-config`. */
export interface StudioConfig {
  apiBasePath: string
  mountPath: string
  authMode: 'password' | 'provider'
  loginUrl: string | null
  collections: StudioCollection[]
  /** Whether every edit goes to the editor's draft (a permissions policy is active). */
  drafts?: boolean
  /** The site's stylesheets (paths on the site) the Markdown body preview uses; none: the Studio's look. */
  previewStylesheets?: string[]
  /** The page's CSP nonce for style elements (CodeMirror's styles). */
  styleNonce?: string
}

/** The settings the server embedded in the shell's `#cms-studio-config` block (no inline script under the CSP). */
export function studioConfig (): StudioConfig {
  return JSON.parse(document.getElementById('cms-studio-config')?.textContent ?? '{}') as StudioConfig
}

/** How long ago a time was, in words ("5 minutes ago", "yesterday"). */
export function timeAgo (ts: number): string {
  const fmt = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
  const steps: Array<[Intl.RelativeTimeFormatUnit, number]> = [['second', 60], ['minute', 60], ['hour', 24], ['day', 30], ['month', 12]]
  let v = Math.round((ts - Date.now()) / 1000)
  for (const [unit, size] of steps) {
    if (Math.abs(v) < size) return fmt.format(v, unit)
    v = Math.round(v / size)
  }
  return fmt.format(v, 'year')
}

/**
 * Runs `load` `ms` after the last change of `deps` (typing a word sends one request, not one per key)
 * and hands its answer to `done`, its error to `failed`; an answer arriving after `deps` changed is dropped.
 */
export function useDebouncedLoad<T> (load: () => Promise<T>, done: (value: T) => void, failed: (err: Error) => void, ms: number, deps: unknown[]): void {
  useEffect(() => {
    let current = true
    const timer = setTimeout(() => { load().then(v => { if (current) done(v) }, (err: Error) => { if (current) failed(err) }) }, ms)
    return () => { current = false; clearTimeout(timer) }
  }, deps)
}

/** Moves to another Studio URL without reloading. */
export type Navigate = (to: string) => void

/** The text to show of an entry: a title-like field, else its id. */
export function entryTitle (id: string, data: Record<string, unknown> | undefined): string {
  for (const k of ['title', 'name', 'label']) {
    const v = data?.[k]
    if (typeof v === 'string' && v.trim() !== '') return v
  }
  return id
}

/**
 * Moves focus to an element once it exists (a page's heading after a page change, a message after
 * a save), so a keyboard or screen-reader user is told where they are.
 */
export function focusSoon (selector: string): void {
  requestAnimationFrame(() => {
    const el = document.querySelector<HTMLElement>(selector)
    if (el === null) return
    // A heading or message is made focusable from script only; a control keeps its Tab stop.
    if (el.tabIndex < 0 && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1')
    el.focus({ preventScroll: selector !== 'main h1' })
  })
}
