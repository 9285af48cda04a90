/** The outcome of a publish in words: each entry published, in conflict or failed, and the commit and rebuild. */
import type { JSX } from 'preact'
import type { PublishReport } from './api.js'

/** A publish report's per-entry outcomes in words. */
export function PublishResult ({ report }: { report: PublishReport }): JSX.Element {
  return (
    <div class="report" role="status">
      {report.published.map(p => <p key={'p' + p.id}>Published {p.collection}/{p.id}{p.deleted ? ' (deleted)' : ''}.</p>)}
      {report.conflicts.map(c => <p class="error" key={'c' + c.id}>Not published {c.collection}/{c.id}: {c.message}</p>)}
      {report.failed.map(f => <p class="error" key={'f' + f.id}>Failed {f.collection}/{f.id}: {f.error}</p>)}
      {report.published.length + report.conflicts.length + report.failed.length === 0 && <p>Nothing to publish.</p>}
      {report.commit !== undefined && <p>Commit {report.commit.slice(0, 7)}.</p>}
      {report.commitError !== undefined && <p class="error">Commit failed: {report.commitError}</p>}
      {report.push !== undefined && (report.push.ok ? <p>Pushed to the git host.</p> : <p class="error">Not pushed to the git host: {report.push.error} (Retry push on the dashboard sends it.)</p>)}
      {report.rebuild?.triggered === true && <p>{report.rebuild.ok ? 'Rebuild started.' : 'The rebuild hook failed; it can be retried.'}</p>}
    </div>
  )
}
