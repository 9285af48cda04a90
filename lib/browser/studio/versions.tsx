/**
 * Two versions of an entry compared field by field: kept unsaved changes against the saved entry, a
 * conflict ("Keep mine" / "Take theirs"), and the history with word diffs and Restore.
 */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Entry, JsonSchema, Snapshot } from './api.js'
import { fieldLabel } from './schema-form.js'
import { sameValue, type UnsavedRecord } from './unsaved.js'
import { timeAgo } from './types.js'
import { Listed } from './dashboard.js'

/** A value as text for a diff ('' for none). */
const text = (v: unknown): string => v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v)

/** A value as text for a comparison ('(empty)' for none), cut to `max` characters. */
function shown (v: unknown, max = Infinity): string {
  const s = text(v) === '' ? '(empty)' : text(v)
  return s.length > max ? s.slice(0, max - 3) + '…' : s
}

/** Unsaved changes kept in the browser beside the saved values, with Restore and Discard. */
export function UnsavedOffer ({ offer, revision, schema, saved, onRestore, onDiscard }: {
  offer: UnsavedRecord
  /** The saved entry's revision now (the offer tells when it moved). */
  revision: number
  schema: JsonSchema
  saved: Record<string, unknown>
  onRestore: () => void
  onDiscard: () => void
}): JSX.Element {
  return (
    <section class="unsaved" aria-labelledby="unsaved-heading">
      <h2 id="unsaved-heading">Unsaved changes</h2>
      {offer.revision === revision
        ? <p>This browser kept changes to this entry that were not saved ({new Date(offer.at).toLocaleString()}). Restore them into the form, or discard them.</p>
        : <p class="moved">This entry changed since these unsaved changes were made: they were typed at revision {offer.revision}, and the saved entry is now at revision {revision}. Compare both below before you choose. Restore puts your unsaved values into the form over the saved ones; nothing is written until you Save.</p>}
      <dl class="diff" aria-label="Unsaved and saved values">
        {[...Object.keys(offer.changes), ...offer.cleared].map(k => (
          <div key={k}>
            <dt>{fieldLabel(k, schema.properties?.[k] ?? {})}</dt>
            <dd><span class="muted">Unsaved: </span><ins>{shown(offer.cleared.includes(k) ? undefined : offer.changes[k], 160)}</ins></dd>
            <dd><span class="muted">Saved now: </span><del>{shown(saved[k], 160)}</del></dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={onRestore}>Restore unsaved changes</button>
      <button type="button" class="secondary" onClick={onDiscard}>Discard</button>
    </section>
  )
}

interface ConflictProps {
  schema: JsonSchema
  /** The data the form was loaded with (to tell which fields the editor changed). */
  base: Record<string, unknown>
  mine: Record<string, unknown>
  /** The newer version (null while it loads). */
  theirs: Entry | null
  busy: boolean
  onResolve: (data: Record<string, unknown>, revision: number) => void
  onReload: () => void
  onOverwrite: (revision: number) => void
}

/** The fields whose values differ between two versions. */
function changedFields (a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(k => !sameValue(a[k], b[k]))
}

/** The conflict panel: the versions side by side and the actions. */
export function ConflictPanel ({ schema, base, mine, theirs, busy, onResolve, onReload, onOverwrite }: ConflictProps): JSX.Element {
  const theirData = theirs?.data ?? {}
  const fields = theirs === null ? [] : changedFields(mine, theirData)
  // By default a field only the other person changed takes theirs; one the editor changed keeps mine.
  const [choice, setChoice] = useState<Record<string, 'mine' | 'theirs'>>({})
  const chosen = (k: string): 'mine' | 'theirs' => choice[k] ?? (sameValue(mine[k], base[k]) ? 'theirs' : 'mine')
  const resolve = (): void => {
    if (theirs === null) return
    const data: Record<string, unknown> = { ...theirData }
    for (const k of fields) {
      if (chosen(k) === 'theirs') continue
      if (mine[k] === undefined) delete data[k]
      else data[k] = mine[k]
    }
    onResolve(data, theirs.revision)
  }
  return (
    <section class="conflict" role="alert" aria-labelledby="conflict-heading" tabIndex={-1} id="conflict">
      <h2 id="conflict-heading">This entry was changed by someone else</h2>
      <p>Since you opened it, someone saved a newer version{theirs !== null ? ` (revision ${theirs.revision})` : ''}. Your typed changes are still in the form. Choose, field by field, which value to keep.</p>
      {theirs === null
        ? <p>Loading the newer version…</p>
        : fields.length === 0
          ? <p>The newer version holds the same values as yours.</p>
          : fields.map(k => {
            const label = fieldLabel(k, schema.properties?.[k] ?? {})
            return (
              <fieldset key={k} class="conflict-field">
                <legend>{label}</legend>
                <div class="versions">
                  <div><span class="muted">Theirs: </span><span class="their-value">{shown(theirData[k])}</span></div>
                  <div><span class="muted">Yours: </span><span class="my-value">{shown(mine[k])}</span></div>
                </div>
                <label class="choice"><input type="radio" name={`choice-${k}`} checked={chosen(k) === 'mine'} onChange={() => setChoice(c => ({ ...c, [k]: 'mine' }))} /> Keep mine</label>
                <label class="choice"><input type="radio" name={`choice-${k}`} checked={chosen(k) === 'theirs'} onChange={() => setChoice(c => ({ ...c, [k]: 'theirs' }))} /> Take theirs</label>
              </fieldset>
            )
          })}
      <button type="button" disabled={busy || theirs === null} onClick={resolve}>Save my choices</button>
      <button type="button" class="secondary" onClick={onReload}>Reload</button>
      <button type="button" class="danger" disabled={theirs === null} onClick={() => { if (theirs !== null) onOverwrite(theirs.revision) }}>Overwrite</button>
    </section>
  )
}

type DiffWords = typeof import('diff').diffWords
interface HistoryProps { history: Snapshot[] | null, current: Record<string, unknown>, schema: JsonSchema, onRestore: (snap: Snapshot) => void }

const VERBS: Record<string, string> = { put: 'Edited', save: 'Edited', publish: 'Published', restore: 'Restored', delete: 'Deleted' }
/** Unchanged text longer than this is shortened to its ends in a diff. */
const CONTEXT = 60

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
export function HistoryPanel ({ history, current, schema, onRestore }: HistoryProps): JSX.Element {
  const [diffWords, setDiffWords] = useState<{ fn: DiffWords } | null>(null)
  useEffect(() => { import('diff').then(m => setDiffWords({ fn: m.diffWords }), () => {}) }, [])
  return (
    <aside class="history" aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <p class="muted small">Each change, newest first. Open one to see what changed since (removed, added); Restore puts back the version from before that change.</p>
      <Listed items={history} empty={<p class="muted">No earlier versions.</p>}>{snaps => (
            <ul>
              {[...snaps].reverse().map(snap => {
                const changed = changedFields(snap.data ?? {}, current)
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
      )}</Listed>
    </aside>
  )
}
