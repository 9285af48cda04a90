/**
 * Helpers of the Studio's editor-task tests: a timed task that prints its steps, and the refs of
 * the site repository that a save, publish or discard can move, read with git itself.
 */
import { git } from './site.js'

/** A timed editor task: `done()` prints its steps with the time it took. */
export interface EditorTask { step: (what: string) => void, done: () => void }

/**
 * Starts timing an editor task.
 * @param name what the editor does, as printed
 * @returns the task
 */
export function editorTask (name: string): EditorTask {
  const start = Date.now()
  const steps: string[] = []
  return {
    step: what => { steps.push(what) },
    done: () => { console.log(`# task "${name}": ${steps.length} steps, ${Date.now() - start} ms\n${steps.map((s, i) => `#   ${i + 1}. ${s}`).join('\n')}`) }
  }
}

/** The repository's refs that a save can move: HEAD, the drafts (one ref per editor), the history. */
export interface RepoRefs { head: string, drafts: string[], history: string }

/**
 * @param repoDir the site repository
 * @returns HEAD's commit, the draft refs' names and the history ref's commit ('' when absent)
 */
export function refsOf (repoDir: string): RepoRefs {
  const drafts = git(repoDir, 'for-each-ref', '--format=%(refname)', 'refs/cms/drafts').split('\n').filter(l => l !== '')
  const history = git(repoDir, 'for-each-ref', '--format=%(objectname)', 'refs/cms/history').trim()
  return { head: git(repoDir, 'rev-parse', 'HEAD').trim(), drafts, history }
}
