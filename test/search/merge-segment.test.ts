import t, { type Test } from 'tap'
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { realpathSync } from 'node:fs'
import { buildSegment, type BuiltSegment, type SegmentJob } from '../../lib/search/build-segment.js'
import { mergeSegment } from '../../lib/search/merge-segment.js'
import { SearchSnapshot, type LoadedSegment } from '../../lib/search/search-snapshot.js'
import { SearchSegment, type SegmentData } from '../../lib/search/search-segment.js'
import { SegmentFileChanged, SMALL_SEGMENT_BYTES } from '../../lib/search/segment-file.js'
import { FullTextIndex } from '../../lib/search/full-text-index.js'
import { parseQuery } from '../../lib/search/search-query.js'

const ARRAYS = ['termStart', 'postStart', 'bodyStart', 'df', 'bodyLen', 'postings'] as const

async function tempDir (t: Test): Promise<string> {
  const dir = realpathSync(await mkdtemp(path.join(os.tmpdir(), 'merge-segment-')))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return dir
}

const id = (i: number): string => `p${String(i).padStart(5, '0')}`

/** An entry file: a title, tags, a body with words of its own, repeated words (body counts) and long gaps. */
function entry (i: number, version: string, ownWords: number): string {
  const own = Array.from({ length: ownWords }, (_, w) => `w${i}x${w}${version}`).join(' ')
  const rare = i % 997 === 0 ? ' sesquipedalian' : ''
  return `---\ntitle: Post ${i} ${i % 7 === 0 ? 'walrus' : 'heron'} ${version}\ntags: [t${i % 5}, shared]\n---\n` +
    `Über ${own} common words 東京 ${i % 3 === 0 ? 'lantern lantern lantern lantern' : 'tulip tulip'}${rare} ${version} shared\n`
}

/** The job over the files of `ids` (absolute paths), and a signature for each: its version. */
function jobOf (dir: string, files: Map<string, string>): { job: SegmentJob, sigs: string[] } {
  const entries = [...files]
  // Not in id order: the merge sorts, as a full build does.
  entries.reverse()
  return {
    job: { repoRealDir: dir, files: entries.map(([name]) => [name, path.join(dir, `${name}.md`)]), format: 'md', titleField: 'title' },
    sigs: entries.map(([, sig]) => sig)
  }
}

/**
 * N entries (`sig-<i>` as their signatures), their full build, and that build persisted and read back.
 * @returns the job, its signatures, the build, the snapshot, the ids in document order, the segment read back
 */
async function persisted (t: Test, n: number): Promise<{ job: SegmentJob, sigs: string[], built: BuiltSegment, snapshot: SearchSnapshot, ids: string[], previous: LoadedSegment }> {
  const dir = await tempDir(t)
  const files = new Map<string, string>()
  for (let i = 0; i < n; i++) {
    await writeFile(path.join(dir, `${id(i)}.md`), entry(i, 'v1', 2))
    files.set(id(i), `sig-${i}`)
  }
  const { job, sigs } = jobOf(dir, files)
  const built = await buildSegment(job)
  const snapshot = new SearchSnapshot({ file: path.join(dir, 'posts.bin'), key: 'k', repo: dir })
  const ids = Array.from(built.order, i => job.files[i]![0])
  await snapshot.write({ segment: built.segment, ids, sigs: Array.from(built.order, i => sigs[i] as string) })
  const previous = await snapshot.read()
  if (previous === null) throw new Error('not read back')
  return { job, sigs, built, snapshot, ids, previous }
}

function same (t: Test, merged: SegmentData, full: SegmentData, what: string): void {
  t.equal(merged.docs, full.docs, `${what}: documents`)
  t.equal(merged.dict, full.dict, `${what}: dictionary`)
  for (const key of ARRAYS) t.ok(Buffer.from(merged[key].buffer, merged[key].byteOffset, merged[key].byteLength).equals(Buffer.from(full[key].buffer, full[key].byteOffset, full[key].byteLength)), `${what}: ${key} byte for byte`)
}

const QUERIES = ['walrus', 'lantern', 'common words', 'heron tulip', 'w1', 'w12x', 'w99x3', 'shared t3', 'sesquipedalian', 'v2', 'v3 lantern', 'nothing']

function answers (index: FullTextIndex, queries: string[]): string[][] {
  return queries.map(q => {
    const ranked = index.search(parseQuery(q) ?? { words: [], prefixLast: false }, new Set(), 50)
    return [String(ranked.total), ...Array.from(ranked.keys, k => ranked.idOf(k))]
  })
}

for (const [size, docs, ownWords] of [['small', 40, 2], ['big (postings read a chunk at a time)', 3000, 12]] as const) {
  t.test(`a merge of the previous segment with the changed files is the full build's segment, array for array: ${size}`, async t => {
    const dir = await tempDir(t)
    const files = new Map<string, string>()
    for (let i = 0; i < docs; i++) {
      await writeFile(path.join(dir, `${id(i)}.md`), entry(i, 'v1', ownWords))
      files.set(id(i), `sig-${i}-v1`)
    }
    const before = jobOf(dir, files)
    const built = await buildSegment(before.job)
    const snapshot = new SearchSnapshot({ file: path.join(dir, 'state', 'posts.bin'), key: 'k', repo: dir })
    const ids = Array.from(built.order, i => (before.job.files[i] as [string, string])[0])
    // One document recorded as not to be trusted (a racy file): it must be read again.
    const recorded = Array.from(built.order, i => before.job.files[i]![0] === id(4) ? '' : before.sigs[i] as string)
    await snapshot.write({ segment: built.segment, ids, sigs: recorded })
    const previous = await snapshot.read()
    if (previous === null) throw new Error('not read back')
    if (docs > 1000) t.ok(built.segment.termStart.byteLength + built.segment.dict.length * 2 > SMALL_SEGMENT_BYTES, 'a big segment (read from the file a chunk at a time)')

    // Edits (new words, old ones gone), a title-only edit, deletions (the first and last documents
    // too), new entries between and after the others, a file given but gone, an unreadable file.
    const changed = new Set<string>()
    const edit = async (i: number, text: string): Promise<void> => { await writeFile(path.join(dir, `${id(i)}.md`), text); files.set(id(i), `sig-${i}-${text.length}-edit`); changed.add(id(i)) }
    await edit(1, entry(1, 'v2', ownWords))
    await edit(docs - 2, entry(docs - 2, 'v3', ownWords + 3))
    await edit(9, entry(9, 'v1', ownWords).replace('heron', 'osprey'))
    await edit(6, '---\ntitle: [unclosed\n---\nbroken')
    for (const i of [0, 3, docs - 1]) { await unlink(path.join(dir, `${id(i)}.md`)); files.delete(id(i)) }
    for (const extra of [`${id(5)}a`, `${id(docs + 10)}`]) {
      await writeFile(path.join(dir, `${extra}.md`), entry(docs + 10, 'v2', ownWords))
      files.set(extra, `sig-${extra}`)
      changed.add(extra)
    }
    // The same recorded signature but file 4 rewritten: recorded '' above, so it is read again.
    await writeFile(path.join(dir, `${id(4)}.md`), entry(4, 'v3', ownWords))
    changed.add(id(4))
    // Given with another signature, but gone by the time it is read: left out, as a full build does.
    // (Given with its recorded signature, it would be taken as recorded: the signature vouches for
    // the document, and the loader drops a document whose entry has no row.)
    files.set(id(2), 'sig-2-gone')
    await unlink(path.join(dir, `${id(2)}.md`))

    const after = jobOf(dir, files)
    const merged = await mergeSegment(after.job, after.sigs, previous)
    const full = await buildSegment(after.job)
    same(t, merged.segment, full.segment, size)
    t.same(Array.from(merged.order, i => after.job.files[i]![0]), Array.from(full.order, i => after.job.files[i]![0]), 'the same entries in the same order')
    t.equal(merged.reused, full.segment.docs - changed.size, 'every unchanged document reused, the changed ones read')
    const mergedIds = Array.from(merged.order, i => after.job.files[i]![0])
    t.same(answers(new FullTextIndex(new SearchSegment(merged.segment), mergedIds), QUERIES), answers(new FullTextIndex(new SearchSegment(full.segment), mergedIds), QUERIES), 'the same answers')
    t.same(answers(new FullTextIndex(new SearchSegment(merged.segment), mergedIds), ['osprey', 'v2 w1x0v2']).map(a => a[0]), ['1', '1'], 'edited entries by their new words')
  })
}

t.test('a merge whose previous segment has nothing valid reads every entry, and one with everything valid reads none', async t => {
  const { job, sigs, built, snapshot, previous } = await persisted(t, 30)
  const all = await mergeSegment(job, sigs, previous)
  t.equal(all.reused, 30)
  same(t, all.segment, built.segment, 'all reused')
  const none = await mergeSegment(job, sigs.map(() => ''), (await snapshot.read())!)
  t.equal(none.reused, 0, 'signatures not to be trusted: every entry read')
  same(t, none.segment, built.segment, 'none reused')
  const other = await mergeSegment(job, sigs.map(s => `${s}-later`), (await snapshot.read())!)
  t.equal(other.reused, 0, 'other signatures: every entry read')
})

t.test('a previous file replaced after its check: the merge refuses it (SegmentFileChanged; the search process then reads every file)', async t => {
  const { job, sigs, built, snapshot, ids, previous } = await persisted(t, 10)
  await snapshot.write({ segment: built.segment, ids, sigs: ids.map(() => '') })
  await t.rejects(mergeSegment(job, sigs, previous), SegmentFileChanged)
})
