/**
 * Test helper: a throwaway git repository holding one of the example sites of
 * test/fixtures/sites/ (shaped like real Hugo, Jekyll, Astro and Eleventy sites).
 */
import { cp, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { git, makeSite } from './site.js'
import { fromRoot } from './repo-root.js'

/** The folder holding the example sites. */
export const EXAMPLE_SITES_DIR = fromRoot('test/fixtures/sites/')

/** The example sites, by generator. */
export const EXAMPLE_SITES = ['hugo', 'jekyll', 'astro', 'eleventy'] as const

/** The name of one example site. */
export type ExampleSiteName = typeof EXAMPLE_SITES[number]

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * Copies an example site into a temp dir, adds or replaces files, and commits it all on `main`.
 * @param t the tap test (removes the dir at teardown)
 * @param name which example site (`hugo`, `jekyll`, `astro`, `eleventy`)
 * @param files extra or replaced files, path -> content (null deletes), applied after the copy
 * @param opts `commit: false` leaves the repository without a commit
 * @returns the repository directory
 */
export async function makeExampleSite (t: Teardown, name: ExampleSiteName, files: Record<string, string | Uint8Array | null> = {}, opts: { commit?: boolean } = {}): Promise<string> {
  const dir = await makeSite(t, {}, { fixtures: false, commit: false })
  await cp(path.join(EXAMPLE_SITES_DIR, name), dir, { recursive: true })
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(dir, rel)
    if (content === null) { await rm(full, { recursive: true, force: true }); continue }
    await mkdir(path.dirname(full), { recursive: true })
    await writeFile(full, content)
  }
  if (opts.commit !== false) {
    // -text: the example sites hold a CRLF file that must reach the repository byte for byte.
    await mkdir(path.join(dir, '.git', 'info'), { recursive: true })
    await writeFile(path.join(dir, '.git', 'info', 'attributes'), '* -text\n')
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', `${name} example site`)
  }
  return dir
}
