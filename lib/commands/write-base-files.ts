/**
 * Writing many entry files of a publish: atomic replace or removal, a bounded number at a time,
 * then the revision bump in each collection's index. One entry's failure does not stop the others.
 */
import path from 'node:path'
import pLimit from 'p-limit'
import type { EntryData } from '../content/formats.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { writeFileAtomic, syncDirectory } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { removeEntryFile } from '../storage/entry-paths.js'
import type { Services } from '../services.js'

/** One entry file a publish writes. */
export interface BaseFileWrite {
  index: CollectionIndex
  id: string
  file: string
  /** The new content; null removes the file. */
  text: string | null
  data: EntryData | null
}

/** Files written at once. */
const CONCURRENCY = 16

/** Replaces or removes one file and records its revision. */
async function writeOne (w: BaseFileWrite): Promise<number> {
  if (w.text === null || w.data === null) {
    await removeEntryFile(w.index.collection.dir, w.file)
    return await w.index.recordDelete(w.id)
  }
  // The directories are synced once each, below, before any result is reported.
  await writeFileAtomic(w.file, w.text, { syncDirectory: false })
  return await w.index.recordWrite(w.id, w.data)
}

/** Writes each file and records its new revision; gives per write the revision or the error message. */
export async function writeBaseFiles (services: Services, writes: BaseFileWrite[]): Promise<Array<{ revision: number } | { error: string }>> {
  const limit = pLimit(CONCURRENCY)
  const results = await Promise.all(writes.map(async w => await limit(async () => {
    try {
      await assertRealInside(services.content.repoRealDir, w.file)
      return { revision: await w.index.serviceChange(w.id, async () => await writeOne(w)) }
    } catch (err) {
      services.log.error({ err, file: w.file }, 'publish write failed')
      return { error: 'The entry file could not be written' }
    }
  })))
  await Promise.all([...new Set(writes.map(w => path.dirname(w.file)))].map(syncDirectory))
  return results
}
