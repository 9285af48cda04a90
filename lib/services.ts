/** Everything one service instance owns, created by `createCms`; two instances never share any of it. */
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { RuntimeSettings } from './runtime.js'
import type { ContentStore } from './storage/content-store.js'
import type { AuthService } from './auth/create-auth.js'
import type { KeyedLock } from './storage/keyed-lock.js'
import type { HistoryStore } from './storage/history-store.js'
import type { DraftStore } from './storage/draft-store.js'
import type { GitCommitter } from './publish/git-committer.js'
import type { RebuildWebhook } from './publish/rebuild-webhook.js'
import type { DeploymentStatus } from './publish/deployment-status.js'
import type { RecoveryPlanStore } from './publish/recovery-plan.js'
import type { RemoteSync } from './remote/remote-sync.js'
import type { MediaIndex } from './storage/media-index.js'
import type { SiteSearch } from './search/collection-search.js'
import type { BoundedRenderer } from './commands/bounded-render.js'
import type { BlockOutlineCache } from './commands/markdown-body.js'
import type { CmsMetrics } from './metrics/cms-metrics.js'

/** The parts of one instance, handed to the HTTP layer and to commands. */
export interface Services {
  /** The site repository (its working tree). */
  repoDir: string
  /** The repository's common git dir (`<repo>/.git`; for a `git worktree` checkout, the main one's): refs and objects. */
  gitDir: string
  /** `<gitDir>/cms`: revision logs, revocations, recovery plan, webhook receipt, instance lock. */
  stateDir: string
  config: Config
  runtime: RuntimeSettings
  log: Logger
  content: ContentStore
  /** Full-text search beside each collection index. */
  search: SiteSearch
  auth: AuthService
  /** Per-key FIFO locks: one writer per entry at a time, different entries in parallel. */
  locks: KeyedLock
  history: HistoryStore
  drafts: DraftStore
  /** Remembers the paths the service wrote, and commits them on publish. */
  committer: GitCommitter
  webhook: RebuildWebhook
  deployment: DeploymentStatus
  plans: RecoveryPlanStore
  /** The link to the site's git remote (inert without `git.remote`). */
  remote: RemoteSync
  /** The media library's index (uploads folders and page-bundle images). */
  media: MediaIndex
  /** Markdown rendering in a worker thread, within a time limit (GET /render, POST /preview). */
  markdown: BoundedRenderer
  /** What `GET /readyz` reports: set by `createCms` once the first index builds end, and at close. */
  readiness: { indexesBuilt: boolean, closing: boolean }
  /** The outlines of Markdown bodies the in-place editor lists and edits (GET /blocks, md_edit). */
  blockOutlines: BlockOutlineCache
  /** The Prometheus metrics (null unless `metrics.enabled`). */
  metrics: CmsMetrics | null
  /** A repository-relative path (forward slashes) of an absolute path inside it. */
  relativePath: (absolute: string) => string
}
