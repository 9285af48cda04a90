/**
 * The Prometheus metrics of one instance (CONTRACT 18) on a Registry of its own. Labels are route
 * patterns, methods, statuses and fixed words: never a path, an entry id or an editor's name.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** The metrics of one instance: the counters are told directly, a request through `request`. */
export class CmsMetrics {
  readonly registry = new Registry()
  readonly requests = new Counter({ name: 'cms_http_requests_total', help: 'HTTP requests by route pattern, method and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] })
  readonly duration = new Histogram({
    name: 'cms_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, method and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry]
  })
  readonly saves = new Counter({ name: 'cms_saves_total', help: 'Writes that succeeded (mutations and restores)', registers: [this.registry] })
  readonly publishes = new Counter({ name: 'cms_publishes_total', help: 'Publishes that were answered 200', registers: [this.registry] })
  readonly conflicts = new Counter({ name: 'cms_conflicts_total', help: 'Requests answered 409 (expectedRevision or stale source), by route pattern', labelNames: ['route'], registers: [this.registry] })
  readonly pushes = new Counter({ name: 'cms_git_pushes_total', help: 'Pushes to the git remote that succeeded', labelNames: ['kind'], registers: [this.registry] })
  readonly pushFailures = new Counter({ name: 'cms_git_push_failures_total', help: 'Pushes to the git remote that failed', labelNames: ['kind'], registers: [this.registry] })
  readonly indexBuilds = new Counter({ name: 'cms_index_builds_total', help: 'Collection indexes built', registers: [this.registry] })
  readonly indexBuildSeconds = new Histogram({ name: 'cms_index_build_duration_seconds', help: 'Time to build a collection index', buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30], registers: [this.registry] })

  /** @param sources whether a remote is configured, and when its last fetch succeeded (ms; null: none yet) */
  constructor (sources: { remoteEnabled: boolean, lastFetchAt: () => number | null }) {
    collectDefaultMetrics({ register: this.registry })
    // eslint-disable-next-line no-new
    new Gauge({
      name: 'cms_sync_lag_seconds',
      help: 'Seconds since the last successful fetch from the git remote (-1: none yet or no remote)',
      registers: [this.registry],
      collect () {
        const at = sources.remoteEnabled ? sources.lastFetchAt() : null
        this.set(at === null ? -1 : Math.max(0, (Date.now() - at) / 1000))
      }
    })
  }

  /** Records one answered request. */
  request (method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) }
    this.requests.inc(labels)
    this.duration.observe(labels, seconds)
    if (status === 409) this.conflicts.inc({ route })
  }
}
