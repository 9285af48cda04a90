/**
 * What every bench section receives: the scale, the concurrency, and a way to make sites that are
 * removed when the run ends.
 */
import { generateSite, type GeneratedSite, type SiteOptions } from './site-generator.js'

/** Settings and resources shared by the sections of one run. */
export class BenchContext {
  private readonly sites: GeneratedSite[] = []
  private readonly plain = new Map<number, Promise<GeneratedSite>>()

  /**
   * @param entries number of posts in the main site (BENCH_ENTRIES, default 10,000)
   * @param concurrency number of concurrent clients (BENCH_CONCURRENCY, default 8)
   * @param log prints a progress line (stderr)
   */
  constructor (readonly entries: number, readonly concurrency: number, readonly log: (line: string) => void) {}

  /**
   * Generates a site that is removed at the end of the run.
   * @param opts entries and extra config
   * @returns the site
   */
  async site (opts: SiteOptions): Promise<GeneratedSite> {
    const site = await generateSite(opts)
    this.sites.push(site)
    return site
  }

  /**
   * A plain site (no extra config) of N posts, generated once per run and shared by the sections
   * that only read it or write entries of their own (generating 10,000 files takes seconds).
   * @param entries number of posts
   * @returns the site
   */
  async plainSite (entries: number): Promise<GeneratedSite> {
    let site = this.plain.get(entries)
    if (site === undefined) {
      this.log(`generating a site of ${entries} posts`)
      site = this.site({ entries })
      this.plain.set(entries, site)
    }
    return await site
  }

  /**
   * Removes every generated site.
   * @returns resolves when removed
   */
  async cleanup (): Promise<void> {
    await Promise.all(this.sites.splice(0).map(async s => { await s.remove() }))
  }
}

/** MB (2^20 bytes) of a byte count. */
export function megabytes (bytes: number): number {
  return bytes / (1024 * 1024)
}
