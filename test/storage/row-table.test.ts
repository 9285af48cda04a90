import t from 'tap'
import { readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeSite } from '../helpers/site.js'
import { loadConfig } from '../../lib/config.js'
import { ContentStore } from '../../lib/storage/content-store.js'
import { RACY_MS, SNAPSHOT_FORMAT } from '../../lib/storage/index-snapshot.js'
import { RowTable, RowTableWriter, type RecordRow } from '../../lib/storage/row-table.js'
import type { IndexRow } from '../../lib/storage/index-row.js'

/** Writes rows into one buffer the way a snapshot file is written (small chunks: chunk edges crossed). */
function tableBytes (rows: RecordRow[], key = 'k'.repeat(64), titleField: string | null = 'title'): { bytes: Buffer, written: boolean[] } {
  const parts: Buffer[] = []
  const writer = new RowTableWriter(SNAPSHOT_FORMAT, key, titleField, chunk => { parts.push(Buffer.from(chunk)) }, 64)
  const written = rows.map(row => writer.add(row))
  writer.end()
  return { bytes: Buffer.concat(parts), written }
}

const row = (id: string, extra: Partial<RecordRow> = {}): RecordRow => {
  const r: RecordRow = {
    id,
    sig: `12:1700000000123.456:${id.length}:1700000000123.456`,
    order: null,
    file: null,
    content: { fields: { title: `Title of ${id}` }, title: `Title of ${id}`, order: null },
    ...extra
  }
  // A row's content carries the row's order.
  if (r.content !== null) r.content = { ...r.content, order: r.order }
  return r
}

t.test('a row table gives back what was written, found by id', async t => {
  const rows: RecordRow[] = [
    row('plain'),
    row('café', { order: -2.5 }),
    row('日本/記事', { order: 0, file: '/repo/content/日本/記事/index.md' }),
    row('emoji-😀', { content: { fields: { name: 'x' }, title: 'emoji-😀', order: null } }),
    row('titled', { content: { fields: { title: 'Field title', body2: 'b' }, title: 'Another title', bodyAt: 42, validationIssues: [{ path: '/title', code: 'minLength', message: 'too short' }], order: 3 }, order: 3 }),
    row('Ã©', { content: { fields: { title: 'two code units that are one UTF-8 letter\'s bytes' }, title: 'two code units that are one UTF-8 letter\'s bytes', order: null } })
  ]
  const { bytes, written } = tableBytes(rows)
  t.same(written, rows.map(() => true))
  const table = RowTable.parse(bytes, SNAPSHOT_FORMAT, 'k'.repeat(64), 'title')
  if (table === null) throw new Error('not parsed')
  t.equal(table.size, rows.length)
  for (const r of rows) {
    const at = table.find(r.id)
    t.ok(at >= 0, `${r.id}: found`)
    t.ok(table.sigEquals(at, r.sig), `${r.id}: its signature`)
    t.equal(table.sig(at), r.sig)
    t.notOk(table.sigEquals(at, `${r.sig}0`), `${r.id}: not a longer one`)
    t.notOk(table.sigEquals(at, r.sig.replace('12:', '13:')), `${r.id}: not another one`)
    t.equal(table.order(at), r.order, `${r.id}: its order`)
    t.equal(table.file(at), r.file, `${r.id}: its file`)
    t.same(table.content(at, r.id), r.content, `${r.id}: its content`)
  }
  for (const missing of ['Plain', 'cafe', 'café ', '日本', 'é', '', 'titled\u0000']) t.equal(table.find(missing), -1, `${JSON.stringify(missing)}: not found`)
  t.equal(table.content(table.find('emoji-😀'), 'emoji-😀').title, 'emoji-😀', 'no title field: the id')

  // A rewrite copies unchanged records and encodes the rest: the same table either way.
  const parts: Buffer[] = []
  const writer = new RowTableWriter(SNAPSHOT_FORMAT, 'k'.repeat(64), 'title', chunk => { parts.push(Buffer.from(chunk)) }, 100)
  rows.forEach((r, i) => { if (i % 2 === 0) writer.copy(table, table.find(r.id)); else writer.add(r) })
  writer.end()
  t.same(Buffer.concat(parts), bytes, 'copied and encoded records give the same bytes')
})

t.test('rows a record cannot carry exactly are left out', async t => {
  const { bytes, written } = tableBytes([
    row('nan', { content: { fields: { x: Number.NaN }, title: 'nan', order: null } }),
    row('inf', { content: { fields: { x: [Number.POSITIVE_INFINITY] }, title: 'inf', order: null } }),
    row('negzero', { content: { fields: { x: -0 }, title: 'negzero', order: null } }),
    row('bad-order', { order: Number.NaN }),
    row('bad-sig', { sig: '1:2:3:4\n' }),
    row('kept')
  ])
  t.same(written, [false, false, false, false, false, true])
  const table = RowTable.parse(bytes, SNAPSHOT_FORMAT, 'k'.repeat(64), 'title')
  t.equal(table?.size, 1)
  t.ok((table?.find('kept') ?? -1) >= 0)
})

t.test('a table in doubt is refused whole', async t => {
  const key = 'k'.repeat(64)
  const { bytes } = tableBytes([row('a'), row('b'), row('c')], key)
  t.ok(RowTable.parse(bytes, SNAPSHOT_FORMAT, key, 'title') !== null)
  t.equal(RowTable.parse(bytes, SNAPSHOT_FORMAT, 'j'.repeat(64), 'title'), null, 'another key')
  t.equal(RowTable.parse(bytes, SNAPSHOT_FORMAT + 1, key, 'title'), null, 'another format')
  for (let cut = 0; cut < bytes.length; cut += 7) t.equal(RowTable.parse(bytes.subarray(0, cut), SNAPSHOT_FORMAT, key, 'title'), null, `cut at ${cut}`)
  // Every single changed byte is told (by the checksum, or the lengths and magic before it).
  let refused = 0
  for (let at = 0; at < bytes.length; at++) {
    const changed = Buffer.from(bytes)
    changed[at] = changed[at]! ^ 0x20
    if (RowTable.parse(changed, SNAPSHOT_FORMAT, key, 'title') === null) refused++
  }
  t.equal(refused, bytes.length, 'no changed byte is taken')
  const twice = tableBytes([row('a'), row('b'), row('a')], key)
  t.equal(RowTable.parse(twice.bytes, SNAPSHOT_FORMAT, key, 'title'), null, 'an id twice')
})

t.test('a released table reads its records from the file it was read from, even once replaced', async t => {
  const key = 'k'.repeat(64)
  const rows = Array.from({ length: 6000 }, (_, i) => row(`entry-${i}-${'é'.repeat(i % 3)}`, {
    order: i % 5 === 0 ? null : i / 7,
    file: i % 11 === 0 ? `/repo/content/other-${i}.mdx` : null,
    content: { fields: { title: `Title ${i}`, text: 'x'.repeat(150), tags: [`t${i % 9}`] }, title: `Title ${i}`, bodyAt: i, order: null }
  }))
  const { bytes } = tableBytes(rows, key)
  t.ok(bytes.length > 1024 * 1024, 'large enough to be released (from 256 KiB on)')
  const file = path.join(t.testdir(), 'posts.rows')
  await writeFile(file, bytes)
  const fd = (await import('node:fs')).openSync(file, 'r')
  const table = RowTable.parse(Buffer.from(bytes), SNAPSHOT_FORMAT, key, 'title', fd)
  if (table === null) throw new Error('not parsed')
  const ats = rows.map(r => table.find(r.id))
  const before = ats.map((at, i) => ({ sig: table.sig(at), order: table.order(at), content: table.content(at, rows[i]!.id) }))
  table.release()
  // Replaced on disk (as a snapshot rewrite does): the table still reads the file it came from.
  await writeFile(`${file}.new`, 'other bytes')
  await rename(`${file}.new`, file)
  const after = ats.map((at, i) => ({ sig: table.sig(at), order: table.order(at), content: table.content(at, rows[i]!.id) }))
  t.same(after, before, 'the same signatures, orders and contents')
  t.same(ats.map(at => table.file(at)), rows.map(r => r.file), 'the same files')
  const parts: Buffer[] = []
  const writer = new RowTableWriter(SNAPSHOT_FORMAT, key, 'title', chunk => { parts.push(Buffer.from(chunk)) })
  for (const at of ats) writer.copy(table, at)
  writer.end()
  t.same(Buffer.concat(parts), bytes, 'records copied from the file give the same table')
})

t.test('a record keeps its revision (a copy can write the current one), and the carried text comes back checksummed', async t => {
  const key = 'k'.repeat(64)
  const rows = [row('a', { rev: 7 }), row('b', { rev: 0xffffffff }), row('c')]
  const parts: Buffer[] = []
  const writer = new RowTableWriter(SNAPSHOT_FORMAT, key, 'title', chunk => { parts.push(Buffer.from(chunk)) }, 64)
  for (const r of rows) writer.add(r)
  const carried = JSON.stringify({ log: 'é'.repeat(40), ids: ['gone'], revs: [3], sigs: [null] })
  writer.end(carried)
  const bytes = Buffer.concat(parts)
  const table = RowTable.parse(bytes, SNAPSHOT_FORMAT, key, 'title')
  if (table === null) throw new Error('refused')
  t.same(['a', 'b', 'c'].map(id => table.rev(table.find(id))), [7, 0xffffffff, 0], 'revisions (0 when not given)')
  t.equal(table.carried, carried)
  t.equal(tableBytesCarried(bytes), carried.length + 'é'.repeat(40).length, 'the carried text\'s byte length is in the end')
  // Copied with the revision now (a lazy row whose entry was revised), or as it was.
  const copied: Buffer[] = []
  const copier = new RowTableWriter(SNAPSHOT_FORMAT, key, 'title', chunk => { copied.push(Buffer.from(chunk)) })
  copier.copy(table, table.find('a'), 8)
  copier.copy(table, table.find('b'))
  copier.end()
  const copy = RowTable.parse(Buffer.concat(copied), SNAPSHOT_FORMAT, key, 'title')
  t.same([copy?.rev(0), copy?.rev(1), copy?.carried], [8, 0xffffffff, ''])
  // Any byte of the carried text changed, or its length: refused.
  const carriedAt = bytes.length - 16 - Buffer.byteLength(carried)
  for (const at of [carriedAt, carriedAt + 10, bytes.length - 17]) {
    const bad = Buffer.from(bytes)
    bad[at] = bad[at]! ^ 1
    t.equal(RowTable.parse(bad, SNAPSHOT_FORMAT, key, 'title'), null, `byte ${at} changed`)
  }
  const longer = Buffer.from(bytes)
  longer.writeUInt32LE(longer.readUInt32LE(bytes.length - 8) + 1, bytes.length - 8)
  t.equal(RowTable.parse(longer, SNAPSHOT_FORMAT, key, 'title'), null, 'a carried length that is not the bytes\'')
  const huge = Buffer.from(bytes)
  huge.writeUInt32LE(0xffffff00, bytes.length - 8)
  t.equal(RowTable.parse(huge, SNAPSHOT_FORMAT, key, 'title'), null, 'a carried length past the start')
})

function tableBytesCarried (bytes: Buffer): number {
  return bytes.readUInt32LE(bytes.length - 8)
}

/** A random but reproducible generator. */
function random (seed: number): () => number {
  let s = seed
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 2 ** 32
  }
}

const CONFIG = `collections:
  posts:
    format: md
    titleField: title
    orderable: true
    schema:
      type: object
      required: [title]
      properties:
        title: { type: string, minLength: 3 }
        order: { type: number }
`

/** The parts of a row lists, sorts and reads use, comparable with t.same. */
function rowView (r: IndexRow): Record<string, unknown> {
  return { id: r.id, file: r.file, sig: r.sig, revision: r.revision, fields: r.fields, bodyAt: r.bodyAt, title: r.title, order: r.order, readError: r.readError, validationIssues: r.validationIssues }
}

t.test('rows taken from the snapshot equal rows built from the files, also after changes made while down', async t => {
  const next = random(18)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
  const words = ['alpha', 'Ünïcødé', '日本語', 'quote"d', 'back\\slash', 'emoji 😀', 'x', '']
  const files: Record<string, string> = { 'cms.config.yaml': CONFIG }
  const ids: string[] = []
  for (let i = 0; i < 240; i++) {
    const id = `${pick(['p', 'é', 'z', 'A'])}${i}`
    ids.push(id)
    const lines: string[] = []
    if (next() < 0.9) lines.push(`title: ${JSON.stringify(`${pick(words)} ${pick(words)}`.trim())}`)
    if (next() < 0.5) lines.push(`order: ${pick(['1', '-3', '2.5', '0', '1e3', '"seven"'])}`)
    if (next() < 0.5) lines.push(`tags: [${pick(words) === '' ? '' : JSON.stringify(pick(words))}]`)
    if (next() < 0.3) lines.push(`flag: ${pick(['true', 'false', 'null', '~'])}`)
    if (next() < 0.2) lines.push(`nested:\n  a: ${JSON.stringify(pick(words))}\n  b: [1, 2]`)
    const ext = next() < 0.1 ? 'mdx' : 'md'
    const text = next() < 0.03 ? '---\ntitle: [unclosed\n---\nbody\n' : `---\n${lines.join('\n')}\n---\n\n${pick(words)} body ${i}\n`
    files[`content/posts/${id}.${ext}`] = text
  }
  const repoDir = await makeSite(t, files, { fixtures: false })
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))

  const rowsOf = async (): Promise<{ rows: Array<Record<string, unknown>>, stats: { fromSnapshot: number, read: number } }> => {
    const store = new ContentStore({ repoDir, stateDir: path.join(repoDir, '.git', 'cms'), config: await loadConfig(repoDir) })
    await store.start()
    const index = await store.index('posts')
    const rows = (await index.all()).map(rowView)
    const stats = index.loadStats
    await store.close()
    return { rows, stats }
  }
  const built = await rowsOf()
  t.equal(built.stats.fromSnapshot, 0)
  const restarted = await rowsOf()
  t.ok(restarted.stats.fromSnapshot > 200, `rows from the snapshot: ${restarted.stats.fromSnapshot}`)
  t.same(restarted.rows, built.rows, 'the same rows, in the same order')

  // While down: same-size, same-mtime edits, a deletion, an addition.
  const dir = path.join(repoDir, 'content/posts')
  const edited: string[] = []
  for (const id of ids.slice(0, 40)) {
    const file = path.join(dir, `${id}.md`)
    let text: string
    try { text = await readFile(file, 'utf8') } catch { continue }
    if (!text.includes('body')) continue
    const st = await stat(file)
    await writeFile(file, text.replace('body', 'bodY').replace(/title: "(.)/, 'title: "Q'))
    await utimes(file, st.atime, st.mtime)
    edited.push(id)
  }
  await rm(path.join(dir, `${ids[50]!}.md`), { force: true })
  await rm(path.join(dir, `${ids[51]!}.mdx`), { force: true })
  await writeFile(path.join(dir, 'added.md'), '---\ntitle: Added here\norder: 4\n---\nNew.\n')
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  const after = await rowsOf()
  t.ok(after.stats.read >= edited.length + 1, `the edited and added files are read (${after.stats.read})`)
  await rm(path.join(repoDir, '.git', 'cms', 'index'), { recursive: true, force: true })
  const rebuilt = await rowsOf()
  t.equal(rebuilt.stats.fromSnapshot, 0)
  t.same(after.rows, rebuilt.rows, 'a restart after the changes gives the rows a full build gives')
  t.ok(after.rows.some(r => r.id === 'added'), 'the added entry is there')
})
