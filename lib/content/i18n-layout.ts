/** Where translations live (CONTRACT 15): `folder` (`<locale>/<path>`), `suffix` (`<path>.<locale>`) or `dirs` (a folder each). */

/** A locale code as sites name them (`en`, `pt-br`, `zh_CN`); never a path or a prototype key. */
export const LOCALE_PATTERN = '^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8}){0,3}$'
const LOCALE = new RegExp(LOCALE_PATTERN)

/** A collection's translations, resolved: id prefixes relative to the collection folder. */
export interface LocaleLayout {
  /** Default locale first. */
  locales: readonly string[]
  layout: 'folder' | 'suffix' | 'dirs'
  /** The locale of the entries outside every locale folder (folder, dirs); null: none. */
  rootLocale: string | null
  /** folder, dirs: each locale's id prefix (`fr`, `no`; '' for the root locale). */
  prefixes: ReadonlyMap<string, string>
}

/** Where one entry sits among the translations. */
export interface EntryLocale {
  locale: string
  /** The id without the locale part: the same for every translation of one page. */
  translationKey: string
}

/** Whether a string is a locale code (not a path, not a reserved name). */
export function isLocaleCode (value: string): boolean {
  return LOCALE.test(value)
}

/**
 * The locale and translation key of an entry id.
 * @returns them, or null when the id is in no locale of the layout
 */
export function localeOfId (layout: LocaleLayout, id: string): EntryLocale | null {
  if (layout.layout === 'suffix') return bySuffix(layout, id) ?? { locale: layout.locales[0]!, translationKey: id }
  let best: { locale: string, prefix: string } | null = null
  for (const [locale, prefix] of layout.prefixes) {
    if (prefix === '' || !id.startsWith(prefix + '/')) continue
    if (best === null || prefix.length > best.prefix.length) best = { locale, prefix }
  }
  const rest = best === null ? id : id.slice(best.prefix.length + 1)
  const locale = best?.locale ?? layout.rootLocale
  if (locale === null) return null
  if (layout.layout === 'dirs') {
    const suffixed = bySuffix(layout, rest)
    if (suffixed !== null) return suffixed
  }
  return { locale, translationKey: rest }
}

/** `<key>.<locale>` in the last segment, for a locale of the layout. */
function bySuffix (layout: LocaleLayout, id: string): EntryLocale | null {
  const slash = id.lastIndexOf('/')
  const dot = id.lastIndexOf('.')
  if (dot <= slash + 1) return null
  const locale = id.slice(dot + 1)
  if (!layout.locales.includes(locale)) return null
  return { locale, translationKey: id.slice(0, dot) }
}

/** The id a translation key has in a locale, as the layout places it. */
export function idForLocale (layout: LocaleLayout, translationKey: string, locale: string): string {
  const defaultLocale = layout.locales[0]!
  if (layout.layout === 'suffix') return locale === defaultLocale ? translationKey : `${translationKey}.${locale}`
  const prefix = layout.prefixes.get(locale)
  if (prefix === undefined) {
    // dirs: a locale without a folder of its own is a suffix in the default locale's folder.
    const base = layout.prefixes.get(defaultLocale) ?? ''
    return `${base === '' ? '' : base + '/'}${translationKey}.${locale}`
  }
  return prefix === '' ? translationKey : `${prefix}/${translationKey}`
}

/**
 * The ids of every translation of a key that exists.
 * @returns locale -> id, in the layout's locale order
 */
export function translationsOf (layout: LocaleLayout, translationKey: string, exists: (id: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {}
  for (const locale of layout.locales) {
    const id = idForLocale(layout, translationKey, locale)
    if (exists(id)) out[locale] = id
  }
  return out
}
