/**
 * What every bench section receives: the entry counts, the concurrency, and sites that are removed
 * when the run ends. A pristine site of each size is generated once (never served) and every
 * section works on a clone of it.
 */
import { rm } from 'node:fs/promises'
import { cloneSite, generateSite, makeRunDir, type GeneratedSite } from './site-generator.js'

/** Settings and resources shared by the sections of one run. */
export class BenchContext {
  private dir: Promise<string> | null = null
  private readonly templates = new Map<number, Promise<GeneratedSite>>()
  private readonly shared = new Map<number, Promise<GeneratedSite>>()

  /**
   * @param sizes the entry counts the size-bound sections run at (10,000 and 100,000 by default)
   * @param concurrency number of concurrent clients (BENCH_CONCURRENCY, default 8)
   * @param log prints a progress line (stderr)
   */
  constructor (readonly sizes: number[], readonly concurrency: number, readonly log: (line: string) => void) {}

  /** The smallest size: where the sections with a single target column run. */
  get entries (): number {
    return Math.min(...this.sizes)
  }

  /**
   * A site of N posts shared by the reads, writes and integrity sections (they write entries of
   * their own), cloned once per run.
   * @param entries number of posts
   * @returns the site
   */
  async sharedSite (entries: number): Promise<GeneratedSite> {
    let site = this.shared.get(entries)
    if (site === undefined) {
      site = this.freshSite(entries)
      this.shared.set(entries, site)
    }
    return await site
  }

  /**
   * A new clone of the pristine site of N posts, removed at the end of the run.
   * @param entries number of posts
   * @param extraConfig lines appended to cms.config.yaml
   * @returns the site
   */
  async freshSite (entries: number, extraConfig = ''): Promise<GeneratedSite> {
    let template = this.templates.get(entries)
    if (template === undefined) {
      this.log(`generating a site of ${entries} posts`)
      template = generateSite(await this.runDir(), entries)
      this.templates.set(entries, template)
    }
    return await cloneSite(await this.runDir(), await template, extraConfig)
  }

  /** This run's folder of sites, made on first use. */
  private async runDir (): Promise<string> {
    this.dir ??= makeRunDir()
    return await this.dir
  }

  /**
   * Removes this run's sites (its folder, nothing else).
   * @returns resolves when removed
   */
  async cleanup (): Promise<void> {
    if (this.dir !== null) await rm(await this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
  }
}

/** MB (2^20 bytes) of a byte count. */
export function megabytes (bytes: number): number {
  return bytes / (1024 * 1024)
}
