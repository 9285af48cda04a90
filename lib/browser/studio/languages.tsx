/**
 * The Studio's languages (CONTRACT 15): locale badges, and an entry's translations, a missing
 * one created by "Translate to <locale>" from its source.
 */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { useDebouncedLoad } from './types.js'
import type { Api, Entry, LocaleInfo } from './api.js'
import { idForLocale } from '../../content/i18n-layout.js'

/** An entry's locale badge. */
export function LocaleBadge ({ locale }: { locale?: string }): JSX.Element | null {
  return locale === undefined ? null : <span class="badge locale" title={`Language: ${locale}`}>{locale}</span>
}

/**
 * An entry's translations: links to those that exist, and for each missing one a "Translate to"
 * button that creates it from the source's data and opens it.
 */
export function TranslationsPanel ({ api, info, collection, entry, entryUrl, navigate }: {
  api: Api
  /** The collection's languages (none: one language, no panel). */
  info: LocaleInfo | undefined
  collection: string
  entry: Entry
  entryUrl: (id: string) => string
  navigate: (url: string) => void
}): JSX.Element | null {
  const [error, setError] = useState('')
  if (info === undefined || entry.translationKey === undefined) return null
  const key = entry.translationKey
  const existing = entry.translations ?? {}
  const outdated = new Set(entry.outdatedTranslations ?? [])
  const source = info.locales[0] ?? ''
  const mark = (locale: string): JSX.Element | null => outdated.has(locale)
    ? <>{' '}<OutdatedBadge source={source} /></>
    : null
  const translate = async (locale: string): Promise<void> => {
    const id = idForLocale({ ...info, prefixes: new Map(Object.entries(info.prefixes)) }, key, locale)
    try {
      await api.mutate({ type: 'put_entry', collection, id, data: { ...(entry.data ?? {}) } })
      // The new entry opens with its source beside it (kept for this tab only).
      sessionStorage.setItem(sourceKey(collection, id), entry.id)
      navigate(entryUrl(id))
    } catch (err) { setError(`Could not create the ${locale} translation: ${(err as Error).message}`) }
  }
  return (
    <aside class="translations" aria-label="Translations">
      <h2>Translations</h2>
      <ul>
        {info.locales.map(locale => {
          const id = existing[locale]
          if (locale === entry.locale) return <li key={locale}><LocaleBadge locale={locale} /> this entry{mark(locale)}</li>
          if (id !== undefined) return <li key={locale}><LocaleBadge locale={locale} /> <a href={entryUrl(id)}>{id}</a>{mark(locale)}</li>
          return (
            <li key={locale}><LocaleBadge locale={locale} /> <span class="badge bad">Missing</span>{' '}
              <button type="button" class="secondary" onClick={() => { void translate(locale) }}>Translate to {locale}</button>
            </li>
          )
        })}
      </ul>
      {error !== '' && <p class="error" role="alert">{error}</p>}
    </aside>
  )
}

/** Says that a translation is older than its source. */
export function OutdatedBadge ({ source }: { source: string }): JSX.Element {
  return <span class="badge bad outdated" title={`The ${source} source changed in a later commit than this translation`}>Outdated: the {source} source changed since</span>
}

function sourceKey (collection: string, id: string): string {
  return `git-cms-translation-source:${collection}/${id}`
}

/**
 * The source of a translation, shown beside its form (read-only), when the entry was opened from
 * "Translate to" in this tab.
 */
export function TranslationSource ({ api, collection, id }: { api: Api, collection: string, id: string }): JSX.Element | null {
  const sourceId = sessionStorage.getItem(sourceKey(collection, id))
  const [data, setData] = useState<Record<string, unknown> | null>(null)
  useDebouncedLoad(async () => sourceId === null ? null : (await api.entry(collection, sourceId))?.data ?? null, setData, () => {}, 0, [sourceId])
  if (sourceId === null || data === null) return null
  return (
    <aside class="translation-source" aria-label={`Source: ${sourceId}`}>
      <h2>Source ({sourceId})</h2>
      <dl>
        {Object.entries(data).map(([k, v]) => [<dt key={`k-${k}`}>{k}</dt>, <dd key={`v-${k}`}>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>])}
      </dl>
    </aside>
  )
}
