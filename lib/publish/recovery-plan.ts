/**
 * The publish recovery plan in `.git/cms/publish-plan.json`, written before the first base file of
 * a publish and removed when it completes; a service killed in between finishes it at its next
 * start, so no entry is half-published and no draft lost.
 */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../storage/atomic-write.js'

/** One entry of a plan: the file content to put in place (null deletes) and the draft it consumes. */
export interface PlanItem {
  collection: string
  id: string
  /** Repository-relative path of the entry file. */
  file: string
  text: string | null
}

/** A publish in progress, as written to `.git/cms/publish-plan.json`. */
export interface RecoveryPlan {
  version: 1
  startedAt: number
  editor: { id: string, name: string }
  items: PlanItem[]
}

/** Reads and writes the single plan file of a repository. */
export class RecoveryPlanStore {
  readonly #file: string

  constructor (stateDir: string) {
    this.#file = path.join(stateDir, 'publish-plan.json')
  }

  /**
   * The retained plan, if any (an unparseable file counts as a plan that cannot be finished).
   * @returns the plan, null when none, or 'corrupt'
   */
  async read (): Promise<RecoveryPlan | null | 'corrupt'> {
    const text = await readFile(this.#file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null
      throw err
    })
    if (text === null) return null
    try {
      const plan = JSON.parse(text) as RecoveryPlan
      if (plan.version !== 1 || !Array.isArray(plan.items)) return 'corrupt'
      return plan
    } catch {
      return 'corrupt'
    }
  }

  /** Writes the plan durably (atomic replace with fsync). */
  async write (plan: RecoveryPlan): Promise<void> {
    await writeFileAtomic(this.#file, JSON.stringify(plan))
  }

  /** Removes the plan once its publish is complete. */
  async clear (): Promise<void> {
    await rm(this.#file, { force: true })
  }
}
