import t from 'tap'
import fs, { writeFileSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { BadRequestError } from '../../lib/errors.js'

// `fileOf` (the path check of every save) resolves a plain file directly in a flat folder by the
// folder's real path and one lstat, not by realpath's walk over every component of its path (issue
// 18, ninth pass); links are resolved, and refused when they leave the folder, as before.

function indexOf (repo: string, dir: string): CollectionIndex {
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false }, i18n: null } as unknown as Collection
  return new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [] })
}

/** The paths given to realpath (the native one `fileOf` uses) while `fn` runs. */
function realpaths (fn: () => void): string[] {
  const native = fs.realpathSync.native
  const seen: string[] = []
  fs.realpathSync.native = ((p: fs.PathLike, o?: unknown) => { seen.push(String(p)); return native(p, o as never) }) as typeof native
  try { fn() } finally { fs.realpathSync.native = native }
  return seen
}

t.test('links are still resolved, and refused when they leave the folder', async t => {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  mkdirSync(path.join(repo, 'elsewhere'))
  writeFileSync(path.join(repo, 'elsewhere', 'x.md'), '---\ntitle: X\n---\n')
  writeFileSync(path.join(dir, 'target.md'), '---\ntitle: T\n---\n')
  symlinkSync(path.join(repo, 'elsewhere', 'x.md'), path.join(dir, 'out.md'))
  symlinkSync(path.join(dir, 'target.md'), path.join(dir, 'in.md'))
  mkdirSync(path.join(repo, '.git'))
  writeFileSync(path.join(repo, '.git', 'config'), '')
  symlinkSync(path.join(repo, '.git', 'config'), path.join(dir, 'git.md'))
  const index = indexOf(repo, dir)
  t.throws(() => index.fileOf('out'), new BadRequestError('The entry path leaves the collection folder'), 'a link out of the folder')
  t.same(realpaths(() => { t.equal(index.fileOf('in'), path.join(dir, 'in.md')) }), [dir, path.join(dir, 'in.md')], 'a link inside it is resolved')
  t.throws(() => index.fileOf('git'), new BadRequestError('The entry path leaves the collection folder'), 'a link into .git')
})
