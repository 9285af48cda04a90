/**
 * An entry's history in words: "Edited by <name>, <time ago>" per version, newest first; opening
 * one shows what changed since, each text field as a word diff of the whole text (the `diff`
 * package's diffWords, loaded with the panel), so a word changed far down a body shows too.
 */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { JsonSchema, Snapshot } from './api.js'
import { fieldLabel } from './schema-form.js'
import { sameValue } from './unsaved.js'

type DiffWords = typeof import('diff').diffWords
interface Props { history: Snapshot[] | null, current: Record<string, unknown>, schema: JsonSchema, onRestore: (snap: Snapshot) => void }

const VERBS: Record<string, string> = { put: 'Edited', save: 'Edited', publish: 'Published', restore: 'Restored', delete: 'Deleted', md_block: 'Edited' }
/** Unchanged text longer than this is shortened to its ends in a diff. */
const CONTEXT = 60

/** "5 minutes ago", "yesterday". */
function timeAgo (ts: number, now = Date.now()): string {
  const fmt = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
  const s = Math.round((ts - now) / 1000)
  const steps: Array<[Intl.RelativeTimeFormatUnit, number]> = [['second', 60], ['minute', 60], ['hour', 24], ['day', 30], ['month', 12], ['year', Infinity]]
  let v = s
  for (const [unit, size] of steps) {
    if (Math.abs(v) < size) return fmt.format(v, unit)
    v = Math.round(v / size)
  }
  return new Date(ts).toLocaleString()
}

/** A value as text for a diff. */
const text = (v: unknown): string => v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v)

/** The word diff of two texts, long unchanged runs shortened. */
function WordDiff ({ then, now, diffWords }: { then: string, now: string, diffWords: DiffWords }): JSX.Element {
  const parts = diffWords(then, now)
  return (
    <span class="word-diff">
      {parts.map((p, i) => {
        if (p.added) return <ins key={i}>{p.value}</ins>
        if (p.removed) return <del key={i}>{p.value}</del>
        const v = p.value
        if (v.length <= CONTEXT * 2 + 10) return <span key={i}>{v}</span>
        const head = i === 0 ? '' : v.slice(0, CONTEXT)
        const tail = i === parts.length - 1 ? '' : v.slice(-CONTEXT)
        return <span key={i}>{head}<span class="muted"> … </span>{tail}</span>
      })}
    </span>
  )
}

/** The history panel: each change, newest first, what changed since, and Restore. */
export function HistoryPanel ({ history, current, schema, onRestore }: Props): JSX.Element {
  const [diffWords, setDiffWords] = useState<{ fn: DiffWords } | null>(null)
  useEffect(() => { import('diff').then(m => setDiffWords({ fn: m.diffWords }), () => {}) }, [])
  return (
    <aside class="history" aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <p class="muted small">Each change, newest first. Open one to see what changed since (removed, added); Restore puts back the version from before that change.</p>
      {history === null
        ? <p>Loading…</p>
        : history.length === 0
          ? <p class="muted">No earlier versions.</p>
          : (
            <ul>
              {[...history].reverse().map(snap => {
                const keys = [...new Set([...Object.keys(snap.data ?? {}), ...Object.keys(current)])]
                const changed = keys.filter(k => !sameValue(snap.data?.[k], current[k]))
                const said = `${VERBS[snap.action] ?? 'Changed'} by ${snap.editor?.name ?? 'someone'}, ${timeAgo(snap.ts)}`
                return (
                  <li key={snap.ts}>
                    <details>
                      <summary>{said}</summary>
                      <p class="muted small">{new Date(snap.ts).toLocaleString()}</p>
                      {changed.length === 0
                        ? <p class="muted">Same as the current version.</p>
                        : (
                          <dl class="diff" aria-label="What changed since">
                            {changed.map(k => (
                              <div key={k}>
                                <dt>{fieldLabel(k, schema.properties?.[k] ?? {})}</dt>
                                <dd>{diffWords === null ? '…' : <WordDiff then={text(snap.data?.[k])} now={text(current[k])} diffWords={diffWords.fn} />}</dd>
                              </div>
                            ))}
                          </dl>
                          )}
                      <button type="button" class="secondary" aria-label={`Restore the version from before: ${said}`} onClick={() => onRestore(snap)}>Restore</button>
                    </details>
                  </li>
                )
              })}
            </ul>
            )}
    </aside>
  )
}
