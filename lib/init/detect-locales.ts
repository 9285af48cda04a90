/** A site's languages for `init` (CONTRACT 15): Hugo's `languages`, an Astro config's `locales` (parsed, never run), locale folders. */
import { parse, type Node } from 'acorn'
import { isLocaleCode } from '../content/i18n-layout.js'

/** A collection's `i18n` as init writes it. */
export interface InitI18n {
  locales: string[]
  layout: 'folder' | 'suffix' | 'dirs'
  rootLocale?: string
  folders?: Record<string, string>
}

/** A folder name that reads as a locale code (`en`, `fr`, `pt-br`, `zh_CN`). */
const LOCALE_FOLDER = /^[a-z]{2,3}([-_][A-Za-z]{2,4})?$/

/**
 * Hugo's `languages`, default first (`defaultContentLanguage`, else by weight), each with its
 * `contentDir` (relative to the repository); null when the site has fewer than two.
 */
export function hugoLanguages (config: Record<string, unknown>, contentDir: string, safe: (value: unknown) => string | null): { locales: string[], contentDirs: Map<string, string> } | null {
  const table = config.languages
  if (table === null || typeof table !== 'object' || Array.isArray(table)) return null
  const entries = Object.entries(table as Record<string, unknown>).filter(([code]) => isLocaleCode(code))
  if (entries.length < 2) return null
  const weight = (v: unknown): number => typeof (v as { weight?: unknown })?.weight === 'number' ? (v as { weight: number }).weight : 0
  entries.sort((a, b) => weight(a[1]) - weight(b[1]))
  const defaultLanguage = typeof config.defaultContentLanguage === 'string' ? config.defaultContentLanguage : entries[0]![0]
  const locales = [defaultLanguage, ...entries.map(([code]) => code).filter(code => code !== defaultLanguage)]
  const contentDirs = new Map<string, string>()
  for (const [code, value] of entries) {
    const own = (value as { contentDir?: unknown } | null)?.contentDir
    contentDirs.set(code, (own === undefined ? null : safe(own)) ?? contentDir)
  }
  if (!contentDirs.has(defaultLanguage)) contentDirs.set(defaultLanguage, contentDir)
  return { locales, contentDirs }
}

/**
 * The folder holding every one of some folders (their longest common path).
 * @returns the common folder (`.` when none)
 */
export function commonFolder (folders: string[]): string {
  const split = folders.map(f => f.split('/'))
  const first = split[0] ?? []
  let n = 0
  while (n < first.length && split.every(s => s[n] === first[n])) n++
  return n === 0 ? '.' : first.slice(0, n).join('/')
}

/**
 * The locales of an Astro config (Starlight's `locales` or Astro's `i18n`), parsed with acorn and
 * never evaluated; null when there are none or acorn cannot parse it (TypeScript syntax).
 */
export function astroLocales (text: string): InitI18n | null {
  let ast: Node
  try { ast = parse(text, { ecmaVersion: 'latest', sourceType: 'module' }) } catch { return null }
  let found: InitI18n | null = null
  visit(ast, node => {
    if (found !== null || node.type !== 'ObjectExpression') return
    const props = propertiesOf(node)
    const locales = props.get('locales')
    const defaultLocale = literalOf(props.get('defaultLocale'))
    if (locales?.type === 'ObjectExpression') {
      const codes: string[] = []
      let rootLocale: string | undefined
      for (const [key, value] of propertiesOf(locales)) {
        if (key === 'root') {
          const lang = literalOf(propertiesOf(value).get('lang'))
          rootLocale = (typeof lang === 'string' ? lang : 'en').toLowerCase()
        } else if (isLocaleCode(key)) codes.push(key)
      }
      if (rootLocale !== undefined) codes.unshift(rootLocale)
      else if (typeof defaultLocale === 'string' && codes.includes(defaultLocale)) codes.unshift(...codes.splice(codes.indexOf(defaultLocale), 1))
      if (codes.length > 1) found = { locales: [...new Set(codes)], layout: 'folder', ...(rootLocale === undefined ? {} : { rootLocale }) }
    } else if (locales?.type === 'ArrayExpression') {
      const codes = (locales as unknown as { elements: Node[] }).elements.map(literalOf).filter((c): c is string => typeof c === 'string' && isLocaleCode(c))
      const first = typeof defaultLocale === 'string' && codes.includes(defaultLocale) ? defaultLocale : codes[0]
      if (first !== undefined && codes.length > 1) found = { locales: [first, ...codes.filter(c => c !== first)], layout: 'folder', rootLocale: first }
    }
  })
  return found
}

/**
 * Of a folder's subfolders, those named like locale codes, when there are at least two.
 * @returns the locale folders (empty when fewer than two)
 */
export function localeFolders (subfolders: string[]): string[] {
  const codes = subfolders.filter(name => LOCALE_FOLDER.test(name) && isLocaleCode(name))
  return codes.length >= 2 ? codes : []
}

/**
 * Locale codes, default first: the config's `lang` or `default_lang` when it is one of them, else
 * `en` when present, else the first.
 */
export function orderLocales (codes: string[], config: Record<string, unknown>): string[] {
  const named = [config.default_lang, config.defaultLocale, config.lang].find((v): v is string => typeof v === 'string' && codes.includes(v))
  const first = named ?? (codes.includes('en') ? 'en' : codes[0])
  return first === undefined ? codes : [first, ...codes.filter(c => c !== first)]
}

function visit (node: unknown, fn: (node: Node) => void): void {
  if (node === null || typeof node !== 'object') return
  if (Array.isArray(node)) { for (const child of node) visit(child, fn); return }
  if (typeof (node as { type?: unknown }).type === 'string') fn(node as Node)
  for (const [key, value] of Object.entries(node)) if (key !== 'type' && value !== null && typeof value === 'object') visit(value, fn)
}

/** An object literal's properties by static key. */
function propertiesOf (node: Node | undefined): Map<string, Node> {
  const out = new Map<string, Node>()
  if (node?.type !== 'ObjectExpression') return out
  for (const prop of (node as unknown as { properties: Array<{ type: string, key: Node, value: Node, computed: boolean }> }).properties) {
    if (prop.type !== 'Property' || prop.computed) continue
    const key = prop.key.type === 'Identifier' ? (prop.key as unknown as { name: string }).name : literalOf(prop.key)
    if (typeof key === 'string') out.set(key, prop.value)
  }
  return out
}

function literalOf (node: Node | undefined): unknown {
  return node?.type === 'Literal' ? (node as unknown as { value: unknown }).value : undefined
}
