/**
 * A save that met a newer version: per field, the other person's value next to the editor's, with
 * a choice for each ("Keep mine" / "Take theirs"); saving writes exactly those choices over the
 * newer version. Reload (take theirs everywhere) and Overwrite (keep mine everywhere) stay.
 */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import type { Entry, JsonSchema } from './api.js'
import { fieldLabel } from './schema-form.js'
import { sameValue } from './unsaved.js'

interface Props {
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

/** A value as text for the panel. */
const show = (v: unknown): string => v === undefined || v === null || v === '' ? '(empty)' : typeof v === 'string' ? v : JSON.stringify(v)

/** The fields that differ between the editor's values and the newer version. */
function conflictingFields (mine: Record<string, unknown>, theirs: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(mine), ...Object.keys(theirs)])].filter(k => !sameValue(mine[k], theirs[k]))
}

/** The conflict panel: the versions side by side and the actions. */
export function ConflictPanel ({ schema, base, mine, theirs, busy, onResolve, onReload, onOverwrite }: Props): JSX.Element {
  const theirData = theirs?.data ?? {}
  const fields = theirs === null ? [] : conflictingFields(mine, theirData)
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
                  <div><span class="muted">Theirs: </span><span class="their-value">{show(theirData[k])}</span></div>
                  <div><span class="muted">Yours: </span><span class="my-value">{show(mine[k])}</span></div>
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
