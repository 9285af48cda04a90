/**
 * The git remote's state in words (CONTRACT 13), on the dashboard: last fetch, last push, a push
 * that failed with a "Retry push" button, and a warning when the remote branch was rewritten.
 * Shown only when the site has a git remote.
 */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Api, SyncReport } from './api.js'

/** The sync status, or nothing without a remote. */
export function SyncStatus ({ api }: { api: Api }): JSX.Element | null {
  const [sync, setSync] = useState<SyncReport | null>(null)
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const load = async (): Promise<void> => { setSync((await api.deployment()).sync ?? null) }
  useEffect(() => { load().catch(() => {}) }, [])
  if (sync === null || !sync.configured) return null
  const retry = async (): Promise<void> => {
    setBusy(true)
    try {
      const report = await api.publish({ retryPush: true })
      setNote(report.push === undefined ? 'Nothing was waiting to be pushed.' : report.push.ok ? `Pushed ${report.push.commit.slice(0, 7)} to ${sync.remote ?? 'the remote'}.` : `The push failed again: ${report.push.error}`)
      await load()
    } catch (err) { setNote(`Could not retry the push: ${(err as Error).message}`) } finally { setBusy(false) }
  }
  return (
    <section class="sync-status" aria-label="Git remote">
      <h2>Git remote</h2>
      <p class={sync.state === 'ok' ? '' : 'warning'}>{sync.message}</p>
      <p>Last fetch from {sync.remote}/{sync.branch}: {when(sync.lastFetchAt)}{sync.lastFetchError !== null ? ` (failed: ${sync.lastFetchError})` : ''}.</p>
      <p>Last push: {sync.lastPush === null ? 'none since the service started' : `${sync.lastPush.commit.slice(0, 7)}, ${when(sync.lastPush.at)}`}.</p>
      {sync.state === 'diverged' && <p class="error" role="alert">The remote branch and this server's history have diverged. Nothing is merged or pushed until someone reconciles them on the server.</p>}
      {sync.pushPending && sync.pushError !== null && (
        <p class="error" role="alert">
          A publish did not reach the git host: {sync.pushError}{' '}
          <button type="button" class="secondary" disabled={busy} onClick={() => { void retry() }}>Retry push</button>
        </p>
      )}
      {sync.divergedRefs.length > 0 && <p class="warning">Kept local and not pushed (changed on both sides): {sync.divergedRefs.join(', ')}.</p>}
      {note !== '' && <p role="status">{note}</p>}
    </section>
  )
}

function when (ms: number | null): string {
  if (ms === null) return 'not yet'
  const seconds = Math.round((Date.now() - ms) / 1000)
  if (seconds < 60) return `${seconds} s ago`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`
  return new Date(ms).toLocaleString()
}
