/** `createCms`: one instance over one site repository, owning every stateful part; `openCms` also gives the internals (CLI, tests). */
import path from 'node:path'
import { rm } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import type Koa from 'koa'
import type { Middleware } from 'koa'
import compose from 'koa-compose'
import { pino, type Logger } from 'pino'
import { checkCollectionSchemas, loadConfigShape, type ConfigInput, type Config } from './config.js'
import { readRuntimeSettings } from './runtime.js'
import { createBlockOutlineCache } from './commands/markdown-body.js'
import { ContentStore } from './storage/content-store.js'
import { SiteSearch } from './search/collection-search.js'
import { createAuth } from './auth/create-auth.js'
import { acquireInstanceLock, type InstanceLock } from './storage/instance-lock.js'
import { createApp } from './app.js'
import type { Services } from './services.js'
import { KeyedLock } from './storage/keyed-lock.js'
import { HistoryStore } from './storage/history-store.js'
import { GitStore } from './storage/git-store.js'
import { DraftStore } from './storage/draft-store.js'
import { removeStaleLocks, sweepTempFiles } from './storage/temp-sweep.js'
import { commonGitDir } from './storage/git-dir.js'
import { GitCommitter } from './publish/git-committer.js'
import { RebuildWebhook } from './publish/rebuild-webhook.js'
import { DeploymentStatus } from './publish/deployment-status.js'
import { RecoveryPlanStore } from './publish/recovery-plan.js'
import { finishRecoveryPlan } from './commands/finish-recovery-plan.js'
import { RemoteSync } from './remote/remote-sync.js'
import { withDefaultRemote } from './remote/clone-instance.js'
import { MediaIndex } from './storage/media-index.js'
import { BoundedRenderer } from './commands/bounded-render.js'
import { RecordSigner } from './storage/record-signature.js'
import { relativeSlashPath } from './storage/safe-path.js'
import type { CmsMetrics } from './metrics/cms-metrics.js'

/** The pause after the first index builds before the full-text opens and the temp sweep, so the first lists are answered first. */
const AFTER_FIRST_BUILDS_MS = 100

/** What `createCms` is given. */
export interface CreateCmsOptions {
  /** The site repository (a git working tree with at least one commit). */
  repoDir: string
  /** A config object used instead of the repository's `cms.config.*`. */
  config?: ConfigInput
  /** Environment variables (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** A pino logger (default: JSON lines on stderr at level `CMS_LOG_LEVEL`, else `info`). */
  logger?: Logger
  /** The git remote to sync with when the config names none (`serve --clone` passes `origin`). */
  defaultRemote?: string
}

/** A running-ready instance: what an embedding application needs, and nothing secret. */
export interface Cms {
  /** The Koa app (use `app.callback()` with `http.createServer`). */
  app: Koa
  /** The loaded config, with every `secret` value left out (webhook and sync secrets). */
  config: Config
  /** Resolves once the background build of every collection index has ended (never rejects: a failed build is logged). */
  ready: Promise<void>
  /** A Koa middleware to mount the CMS inside an existing Koa server. */
  middleware: () => Middleware
  /** Stops the watcher and timers and releases the repository lock. */
  close: () => Promise<void>
}

/** An instance with its internals: for the CLI and the tests of this package only. */
export interface OpenCms {
  /** The public instance, exactly what createCms returns. */
  cms: Cms
  /** Everything the instance owns (runtime settings with the secrets included). */
  services: Services
}

/** Creates an instance over a repository: checks it, loads the config, takes the instance lock, starts the content store. */
export async function createCms (opts: CreateCmsOptions): Promise<Cms> {
  return (await openCms(opts)).cms
}

/** Creates an instance and hands back its internals too (not part of the package's exports). */
export async function openCms (opts: CreateCmsOptions): Promise<OpenCms> {
  const repoDir = path.resolve(opts.repoDir)
  // The config is read while `git rev-parse` runs; a repository error comes first.
  const gitDirFound = commonGitDir(repoDir)
  const configLoaded = loadConfigShape(repoDir, opts.config)
  configLoaded.catch(() => {})
  const gitDir = await gitDirFound
  const env = opts.env ?? process.env
  const runtime = readRuntimeSettings(env)
  const config = withDefaultRemote(await configLoaded, opts.defaultRemote)
  const log = opts.logger ?? pino({ level: env.CMS_LOG_LEVEL ?? 'info' }, pino.destination(2))
  const stateDir = path.join(gitDir, 'cms')
  // prom-client loads only for a site that enables metrics.
  const metricsModule = config.metrics.enabled ? await import('./metrics/cms-metrics.js') : null
  const lock: InstanceLock = await acquireInstanceLock(stateDir)
  const search = new SiteSearch(stateDir)
  // The repository's git processes (cat-file, update-ref), ended by close.
  const git = new GitStore(gitDir)
  const readiness = { indexesBuilt: false, closing: false }
  // What a failed start closes, the latest started first.
  const started: Array<{ close: () => Promise<unknown> }> = [git]
  try {
    const metrics: CmsMetrics | null = metricsModule !== null ? new metricsModule.CmsMetrics({ remoteEnabled: config.git.remote !== null, lastFetchAt: () => remote.state.report.lastFetchAt ?? null }) : null
    // First, so the file watcher's set-up runs while the rest starts.
    const content = new ContentStore({ repoDir, stateDir, config, companion: search.companion, ...(metrics !== null ? { onIndexBuilt: (seconds: number) => { metrics.indexBuilds.inc(); metrics.indexBuildSeconds.observe(seconds) } } : {}), onWatchError: (err) => log.warn({ err }, 'file watcher error'), onCollectionRefused: (collection, reason) => log.warn({ collection, reason }, 'collection definition refused') })
    started.unshift(content)
    // The config's schemas compile in the schema thread meanwhile; one that does not compile stops the start.
    const schemasChecked = checkCollectionSchemas(config, async schema => { await content.schemas.check(schema) })
    schemasChecked.catch(() => {})
    await content.start()
    // The instance lock proves a crashed predecessor is gone: its ref locks and partial uploads are ours to clean.
    await removeStaleLocks(gitDir)
    await rm(path.join(stateDir, 'uploads-tmp'), { recursive: true, force: true })
    const auth = await createAuth({ config, runtime, stateDir, log })
    started.unshift(auth)
    const locks = new KeyedLock()
    const webhook = new RebuildWebhook({ config, stateDir, log })
    const deployment = new DeploymentStatus({ gitDir, config, stateDir })
    // Every refs/cms commit is signed; a fetched one is adopted only when signed by this site.
    const signer = new RecordSigner(runtime.sessionSecret)
    const history = new HistoryStore({ git, journalDir: path.join(stateDir, 'history-journal'), signer })
    const remote = new RemoteSync({
      repoDir, stateDir, config, log, locks, content,
      gitOnPublish: runtime.gitOnPublish,
      signer,
      beforeCmsRefs: async () => { await history.flush() },
      env,
      ...(auth.sharedRevocations !== null ? { shared: [auth.sharedRevocations] } : {}),
      ...(metrics !== null ? { onPush: (kind: 'publish' | 'cms_refs', ok: boolean) => { (ok ? metrics.pushes : metrics.pushFailures).inc({ kind }) } } : {}),
      announce: async (commit, published) => {
        await deployment.recordPublished(commit)
        await webhook.send({ event: 'publish', commit, published })
      }
    })
    started.unshift(remote)
    // Drafts and history reach the git host within seconds of the write (CONTRACT 18).
    git.refs.listeners.add(() => { remote.schedulePush() })
    auth.sharedRevocations?.onRevoke(() => { remote.schedulePush() })
    const media = new MediaIndex({
      repoDir, config, content,
      onWatchError: (err) => log.warn({ err }, 'media watcher error')
    })
    const markdown = new BoundedRenderer({ timeLimitMs: runtime.renderTimeLimitMs })
    const services: Services = {
      repoDir, gitDir, stateDir, config, runtime, log, content, search, auth, locks, history,
      drafts: new DraftStore({ git, signer, keepEmptyRefs: config.git.pushRefs }),
      committer: new GitCommitter({ repoDir, stateDir, config, log, trackWrites: runtime.gitOnPublish }),
      webhook,
      deployment,
      plans: new RecoveryPlanStore(stateDir),
      remote, media, markdown, readiness,
      blockOutlines: createBlockOutlineCache(),
      metrics,
      relativePath: (absolute) => relativeSlashPath(repoDir, absolute)
    }
    await history.open()
    const unfinished = await finishRecoveryPlan(services)
    if (unfinished.size > 0) log.error({ entries: [...unfinished] }, 'an interrupted publish could not be finished; its entries report recovery_conflict')
    // After the recovery plan (whose commit a pending push may be waiting for).
    await remote.start()
    await schemasChecked
    const closing = (): boolean => readiness.closing
    const warming = Promise.resolve()
      .then(async () => { if (!closing()) await content.warm(closing) })
      .catch((err: Error) => { if (!closing()) log.warn({ err }, 'could not pre-build a collection index') })
      .finally(() => { readiness.indexesBuilt = true })
    let app: Koa
    try {
      app = createApp(services)
    } catch (err) {
      readiness.closing = true
      await warming
      throw err
    }
    // `close` ends the pause.
    const pause = new AbortController()
    const settled = warming.then(async () => {
      await delay(AFTER_FIRST_BUILDS_MS, undefined, { signal: pause.signal, ref: false }).catch(() => {})
    })
    const searching = settled.then(async () => { await content.startCompanions(closing) })
    // Temp files a killed predecessor left (older than the lock file; a walk of 0.25-0.86 s at 100,000 entries).
    const sweeping = settled
      .then(async () => { if (!closing()) await sweepTempFiles([config.contentDir, config.uploadsDir, '.cms'].map(d => path.join(repoDir, d)), lock.takenAt) })
      .catch((err: Error) => { log.warn({ err }, 'could not remove leftover temp files') })
    const cms: Cms = {
      app,
      config: withoutSecrets(config),
      ready: warming,
      middleware: () => compose(app.middleware) as Middleware,
      close: async () => {
        readiness.closing = true
        pause.abort()
        await markdown.close()
        await remote.close()
        await media.close()
        await warming
        await sweeping
        await searching
        await content.close()
        await auth.close()
        await history.flush()
        await git.close()
        await lock.release()
      }
    }
    return { cms, services }
  } catch (err) {
    for (const part of started) await part.close().catch(() => {})
    await lock.release()
    throw err
  }
}

/** A deep copy of the config without the values of keys named `secret` or `token` (frozen like the original). */
function withoutSecrets (config: Config): Config {
  const copy = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) {
      return Array.isArray(value) ? Object.freeze(value.map(copy)) : value
    }
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) if (!/secret|token/i.test(key)) out[key] = copy(inner)
    return Object.freeze(out)
  }
  return copy(config) as Config
}
