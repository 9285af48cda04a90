import t from 'tap'
import { readdir, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { ObjectBatch } from '../../lib/storage/object-batch.js'
import { GitObjectReader } from '../../lib/storage/git-object-reader.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { buildPack, encodeEntry, PackIndex } from '../../lib/storage/pack-file.js'

const packFiles = async (gitDir: string): Promise<string[]> => (await readdir(path.join(gitDir, 'objects', 'pack'))).sort()

t.test('a batch is written as one pack of the objects git would write, read back before and after git gc', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const batch = new ObjectBatch()
  const text = '{"ü":"ñ"}\n'
  const blob = batch.blob(Buffer.from(text, 'utf8'))
  t.equal(blob, gitIn(dir, ['hash-object', '--stdin'], text))
  const sub = batch.tree([{ mode: '100644', path: 'x.json', oid: blob, type: 'blob' }])
  // Names whose order differs between plain sorting and git's (a tree sorts as `name/`).
  const items = [
    { mode: '040000', path: 'a', oid: sub, type: 'tree' as const },
    { mode: '100644', path: 'a-b', oid: blob, type: 'blob' as const },
    { mode: '100644', path: 'a.json', oid: blob, type: 'blob' as const },
    { mode: '100644', path: 'a0', oid: blob, type: 'blob' as const },
    { mode: '040000', path: 'Z', oid: sub, type: 'tree' as const }
  ]
  const tree = batch.tree(items)
  const commit = batch.commit({ tree, parents: [], author: { name: 'git-cms', email: 'git-cms@users.git-cms.invalid', timestamp: 1700000000 }, message: 'm' })
  // The same blob added twice is packed once; large objects are compressed, small ones stored.
  batch.blob(Buffer.from(text, 'utf8'))
  const large = 'ünïcödé '.repeat(2000)
  const largeBlob = batch.blob(Buffer.from(large, 'utf8'))
  const empty = batch.blob(Buffer.alloc(0))
  const before: string[] = await packFiles(gitDir).catch(() => [])
  await packs.write(batch.objects)
  const added: string[] = (await packFiles(gitDir)).filter(f => !before.includes(f))
  t.equal(added.length, 2, 'one .pack and one .idx')
  t.match(added[0], /^pack-[0-9a-f]{40}\.idx$/)
  const verify = gitIn(dir, ['verify-pack', '-v', path.join(gitDir, 'objects', 'pack', added[0]!)])
  t.match(verify, /non delta: 6 objects/, 'git verifies the pack: six distinct objects, none a delta')

  const expected = gitIn(dir, ['mktree'], items.map(i => `${i.mode} ${i.type} ${i.oid}\t${i.path}`).join('\n') + '\n')
  t.equal(tree, expected, 'same tree id as git mktree')
  t.equal(gitIn(dir, ['cat-file', '-t', commit]), 'commit')
  t.equal(gitIn(dir, ['log', '-1', '--format=%an|%ae|%at|%s', commit]), 'git-cms|git-cms@users.git-cms.invalid|1700000000|m')
  t.equal(gitIn(dir, ['cat-file', 'blob', blob]), text.trimEnd())
  gitIn(dir, ['update-ref', 'refs/cms/t', commit])
  t.equal(gitIn(dir, ['fsck', '--strict', '--no-progress', '--no-dangling']), '')

  t.equal(gitIn(dir, ['cat-file', 'blob', largeBlob]), large.trimEnd())
  t.equal(gitIn(dir, ['cat-file', '-s', empty]), '0')
  const check = async (reader: GitObjectReader, all = true): Promise<void> => {
    t.equal((await reader.readBlob(blob)).toString('utf8'), text)
    if (all) {
      t.equal((await reader.readBlob(largeBlob)).toString('utf8'), large)
      t.equal((await reader.readBlob(empty)).length, 0)
    }
    t.same((await reader.readTree(tree)).map(e => [e.path, e.type, e.mode]).sort(), items.map(i => [i.path, i.type, i.mode]).sort())
    t.equal(await reader.readCommitTree(commit), tree)
    await t.rejects(reader.readTree(blob), 'a blob is not a tree')
  }
  await check(new GitObjectReader(gitDir, packs))
  await check(new GitObjectReader(gitDir, new PackStore(gitDir)))
  // git gc repacks everything reachable into its own pack and removes ours (and the blobs no
  // tree holds), under a reader that knew ours.
  const warm = new GitObjectReader(gitDir, packs)
  gitIn(dir, ['gc', '-q', '--prune=now'])
  t.notOk((await packFiles(gitDir)).includes(added[0]!), 'our pack is gone')
  await check(warm, false)
  await check(new GitObjectReader(gitDir, new PackStore(gitDir)), false)
})

t.test('objects of every entry header length, stored and deflated, are packed as git reads them', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const batch = new ObjectBatch()
  // Sizes around the header's 4- and 7-bit size fields, and around the stored / deflated limit.
  const sizes = [0, 1, 15, 16, 17, 2047, 2048, 2049, 4095, 4096, 70_000]
  const blobs = sizes.map(size => {
    const content = Buffer.alloc(size, 0)
    for (let i = 0; i < size; i++) content[i] = (i * 31 + size) & 0xff
    return { oid: batch.blob(content), content }
  })
  // A tree over 4 KiB (kept stored, up to one stored block) and one over 64 KiB (deflated).
  const treeOf = (n: number): string => batch.tree(Array.from({ length: n }, (_, i) => ({ mode: '100644', path: `entry-${String(i).padStart(5, '0')}.json`, oid: blobs[i % blobs.length]!.oid, type: 'blob' as const })))
  const trees = [treeOf(150), treeOf(1700)]
  const built = buildPack(batch.objects)
  const index = new PackIndex(built.idx)
  t.equal(index.count, blobs.length + trees.length)
  t.equal(built.pack.subarray(0, 4).toString('latin1'), 'PACK')
  await packs.write(batch.objects)
  const idx = (await packFiles(gitDir)).find(f => f === `${built.name}.idx`)
  t.ok(idx, 'the pack is named by its checksum, as built')
  t.match(gitIn(dir, ['verify-pack', '-v', path.join(gitDir, 'objects', 'pack', idx!)]), new RegExp(`non delta: ${blobs.length + trees.length} objects`))
  for (const blob of blobs) t.equal(gitIn(dir, ['cat-file', '-s', blob.oid]), String(blob.content.length))
  const reader = new GitObjectReader(gitDir, new PackStore(gitDir))
  for (const blob of blobs) t.ok((await reader.readBlob(blob.oid)).equals(blob.content), `${blob.content.length} bytes read back`)
  for (const tree of trees) t.equal(gitIn(dir, ['rev-parse', `${tree}^{tree}`]), tree)
  t.equal((await reader.readTree(trees[1]!)).length, 1700)
})

t.test('a blob added from its text is the blob of its UTF-8 bytes, packed as the same entry', async t => {
  const { dir, gitDir } = makeRepo(t)
  const texts = ['', '{"a":1}\n', 'ü'.repeat(2047), 'x'.repeat(4095), 'é'.repeat(2048), 'y'.repeat(4096), `${'z'.repeat(4094)}é`, '\u{1F600}'.repeat(600)]
  const fromText = new ObjectBatch()
  const fromBytes = new ObjectBatch()
  for (const text of texts) {
    const oid = fromText.blobText(text)
    t.equal(oid, fromBytes.blob(Buffer.from(text, 'utf8')), `${Buffer.byteLength(text)} bytes: same id`)
  }
  for (let i = 0; i < texts.length; i++) {
    const a = fromText.objects[i]!
    const b = fromBytes.objects[i]!
    t.ok(a.content.equals(b.content), 'same content')
    t.ok(encodeEntry(a).bytes.equals(encodeEntry(b).bytes), 'same pack entry')
  }
  t.equal(buildPack(fromText.objects).name, buildPack(fromBytes.objects).name, 'the same pack')
  const packs = new PackStore(gitDir)
  await packs.write(fromText.objects)
  for (const text of texts) {
    const oid = fromBytes.objects[texts.indexOf(text)]!.oid
    t.equal(gitIn(dir, ['cat-file', '-s', oid]), String(Buffer.byteLength(text)))
    t.equal((await new GitObjectReader(gitDir, new PackStore(gitDir)).readBlob(oid)).toString('utf8'), text)
  }
})

t.test('many concurrent writes leave no temporary files, and merging keeps the pack count low', async t => {
  const { dir, gitDir } = makeRepo(t)
  const looseBefore = gitIn(dir, ['count-objects', '-v']).match(/^count: (\d+)/m)?.[1]
  const packs = new PackStore(gitDir)
  const oids: string[] = []
  for (let round = 0; round < 5; round++) {
    await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const batch = new ObjectBatch()
      oids.push(batch.blob(Buffer.from(`round ${round} object ${i}\n`)))
      await packs.write(batch.objects)
    }))
  }
  await packs.idle()
  const files = await packFiles(gitDir)
  t.notOk(files.some(f => f.startsWith('tmp_')), 'no temporary files')
  const packCount = files.filter(f => f.endsWith('.pack')).length
  t.ok(packCount < 10, `50 writes left ${packCount} packs`)
  t.equal(files.filter(f => f.endsWith('.idx')).length, packCount, 'every pack has its index')
  const fresh = new GitObjectReader(gitDir, new PackStore(gitDir))
  for (const [i, oid] of oids.entries()) {
    t.equal(gitIn(dir, ['cat-file', '-t', oid]), 'blob')
    t.match((await fresh.readBlob(oid)).toString(), /^round \d object \d\n$/, `object ${i} readable`)
  }
  t.equal(gitIn(dir, ['count-objects', '-v']).match(/^count: (\d+)/m)?.[1], looseBefore, 'no new loose objects')
  t.equal(gitIn(dir, ['fsck', '--strict', '--no-progress', '--no-dangling']), '')
})

t.test('a pack index finds exactly the objects of its pack', async t => {
  const batch = new ObjectBatch()
  const ids = Array.from({ length: 300 }, (_, i) => batch.blob(Buffer.from(`object ${i}`)))
  const built = buildPack(batch.objects)
  const index = new PackIndex(built.idx)
  t.equal(index.count, 300)
  t.same(index.oids().sort(), [...ids].sort())
  for (const id of ids) t.ok(index.offsetOf(id) >= 12, 'found after the pack header')
  t.equal(index.offsetOf('0'.repeat(40)), -1)
  t.equal(index.offsetOf('f'.repeat(40)), -1)
  t.throws(() => new PackIndex(Buffer.from('not an index')), { name: 'PackIndexError' })
  t.throws(() => new PackIndex(built.idx.subarray(0, 2000)), { name: 'PackIndexError' })
})

t.test('start-up removes our temporary pack files and indexes without their pack only', async t => {
  const { gitDir } = makeRepo(t)
  const packDir = path.join(gitDir, 'objects', 'pack')
  await mkdir(packDir, { recursive: true })
  await writeFile(path.join(packDir, 'tmp_pack_cms_0123_7'), 'half a pack')
  await writeFile(path.join(packDir, 'tmp_pack_ABCDEF'), 'git is writing this one')
  // An index whose pack is gone (a kill between the two renames or removals) goes; a pair stays.
  const orphan = `pack-${'a'.repeat(40)}`
  const pair = `pack-${'b'.repeat(40)}`
  await writeFile(path.join(packDir, `${orphan}.idx`), 'index')
  await writeFile(path.join(packDir, `${pair}.idx`), 'index')
  await writeFile(path.join(packDir, `${pair}.pack`), 'pack')
  t.equal(await new PackStore(gitDir).sweepTemporary(), 2)
  t.same(await packFiles(gitDir), [`${pair}.idx`, `${pair}.pack`, 'tmp_pack_ABCDEF'])
  t.equal(await new PackStore(path.join(gitDir, 'missing')).sweepTemporary(), 0, 'no pack directory: nothing to do')
})

t.test('a merge copies packs its loaded indexes lost track of, and never removes one uncopied', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const oids: string[] = []
  const write = async (i: number): Promise<void> => {
    const batch = new ObjectBatch()
    oids.push(batch.blob(Buffer.from(`object ${i}\n`)))
    await packs.write(batch.objects)
  }
  for (let i = 0; i < 7; i++) await write(i)
  // As after a directory listing taken just before those packs were renamed into place.
  ;(packs as unknown as { packs: Map<string, unknown> }).packs.clear()
  await write(7)
  await packs.idle()
  t.equal((await packFiles(gitDir)).filter(f => f.endsWith('.pack')).length, 1, 'the eight packs were merged into one')
  for (const oid of oids) t.equal(gitIn(dir, ['cat-file', 'blob', oid]), `object ${oids.indexOf(oid)}`)
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--no-dangling']), '')
})

t.test('trees of names in any order and of any kind get the ids git mktree gives them', async t => {
  const { dir } = makeRepo(t)
  const batch = new ObjectBatch()
  const blob = batch.blob(Buffer.from('x\n', 'utf8'))
  const sub = batch.tree([{ mode: '100644', path: 'x.json', oid: blob, type: 'blob' }])
  const names = ['a', 'a-b', 'a.json', 'a0', 'ab', 'a_', 'A', 'Z', 'post-1', 'post-1.json', 'post-10.json', '%2F.json', 'z~', '00', 'ff']
  let seed = 7
  const random = (): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
  for (let round = 0; round < 12; round++) {
    const picked = names.filter(() => random() < 0.6)
    if (round === 11) picked.push('café.json', 'cafe\u0301')
    const items = picked.map(p => random() < 0.5
      ? { mode: '040000', path: p, oid: sub, type: 'tree' as const }
      : { mode: '100644', path: p, oid: blob, type: 'blob' as const })
    // Sorted one way or shuffled: the encoder sorts unless they already are in git's order.
    if (round % 2 === 1) items.sort(() => random() - 0.5)
    const expected = gitIn(dir, ['mktree', '--missing'], items.map(i => `${i.mode} ${i.type} ${i.oid}\t${i.path}`).join('\n') + '\n')
    t.equal(batch.tree(items), expected, `round ${round}: ${items.length} names`)
    const sorted = items.map(i => i.path).sort((a, b) => Buffer.compare(Buffer.from(items.find(i => i.path === a)!.type === 'tree' ? `${a}/` : a), Buffer.from(items.find(i => i.path === b)!.type === 'tree' ? `${b}/` : b)))
    t.equal(batch.tree(sorted.map(name => items.find(i => i.path === name)!)), expected, `round ${round} in git's order`)
  }
  t.throws(() => batch.tree([{ mode: '100644', path: 'x', oid: 'not-hex'.padEnd(40, 'z'), type: 'blob' }]), /Invalid object id/)
})
