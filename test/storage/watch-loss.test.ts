// The content store's watcher (folder-watch.ts) over a real site: an outside edit that keeps size
// and mtime is seen by a list through its event; and when the kernel's event queue overflows (its
// events are dropped, libuv says nothing), every index re-checks every file, so an edit whose
// event was lost is still seen: never a list from a stale index.
import t from 'tap'
import { utimesSync, writeFileSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../../lib/config.js'
import { ContentStore } from '../../lib/storage/content-store.js'
import type { CollectionIndex } from '../../lib/storage/collection-index.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'
import { makeSite } from '../helpers/site.js'
import { FLAT_AND_BUNDLED_CONFIG } from '../helpers/entry-api.js'

const post = (title: string): string => `---\ntitle: ${title}\n---\n\nBody.\n`

/** Rewrites a file with other text of the same size, its mtime set back: only its ctime tells. */
function editKeepingSizeAndMtime (file: string, text: string): void {
  const st = statSync(file)
  writeFileSync(file, text)
  utimesSync(file, st.atime, st.mtime)
}

const titles = async (index: CollectionIndex): Promise<Record<string, unknown>> =>
  Object.fromEntries((await index.all()).map(row => [row.id, row.fields?.title]))

/** Lists until `check` holds, failing after 5 s. */
async function until (index: CollectionIndex, check: (titles: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5000
  for (;;) {
    const seen = await titles(index)
    if (check(seen)) return seen
    if (Date.now() > deadline) return seen
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

t.test('edits seen through events, and through a full re-check after the kernel dropped events', async t => {
  let limit = 16384
  try { limit = Number.parseInt(await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10) } catch {}
  if (!(limit > 0 && limit <= 65536) || process.platform !== 'linux') { t.pass('no inotify queue to overflow cheaply here'); return }
  const repoDir = await makeSite(t, {
    'cms.config.yaml': FLAT_AND_BUNDLED_CONFIG,
    'content/posts/alpha.md': post('Alpha'),
    'content/posts/bravo.md': post('Bravo'),
    'content/bundles/one/index.md': post('One')
  }, { fixtures: false, commit: false })
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  const store = new ContentStore({ repoDir, stateDir: path.join(repoDir, '.git', 'cms'), config: await loadConfig(repoDir) })
  await store.start()
  t.teardown(async () => { await store.close() })
  await store.warm()
  await store.watching
  const posts = await store.index('posts')
  const bundles = await store.index('bundles')
  t.same(await titles(posts), { alpha: 'Alpha', bravo: 'Bravo' })

  // Through its event: a list re-reads the entry.
  editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/alpha.md'), post('ALPHA'))
  t.equal((await until(posts, seen => seen.alpha === 'ALPHA')).alpha, 'ALPHA', 'an edit told by its event')

  // The queue overflows (hidden files: never entries, but the kernel queues their events), then
  // two edits whose events are dropped with the rest, all while this thread reads no event.
  const flood = Math.ceil(limit * 0.6)
  for (let i = 0; i < flood; i++) writeFileSync(path.join(repoDir, 'content/posts', `.flood-${i}`), 'x')
  editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/bravo.md'), post('BRAVO'))
  editKeepingSizeAndMtime(path.join(repoDir, 'content/bundles/one/index.md'), post('ONE'))
  t.equal((await until(posts, seen => seen.bravo === 'BRAVO')).bravo, 'BRAVO', 'an edit whose event was lost')
  t.equal((await until(bundles, seen => seen.one === 'ONE')).one, 'ONE', 'in a bundled collection too')
  t.same(await titles(posts), { alpha: 'ALPHA', bravo: 'BRAVO' }, 'the flood added no entry')
})
