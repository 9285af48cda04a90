import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// The repository's root, found from this file whether it runs as TypeScript (test/helpers/) or as
// the built JavaScript the suite runs (dist/test/helpers/): fixtures and bin/ live only at the root.
const findRoot = (from: string): string => {
  let dir = from
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${from}`)
    dir = parent
  }
  return dir
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)))

/** A path under the repository's root, e.g. `fromRoot('test/fixtures/sites/')`. */
export const fromRoot = (...parts: string[]): string => path.join(ROOT, ...parts)
