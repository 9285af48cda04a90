import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import { SchemaCompiler } from '../../lib/content/schema-tools.js'
import type { Collection } from '../../lib/storage/collection-registry.js'

const SCHEMA = { type: 'object', properties: { title: { type: 'string' }, order: { type: 'number' }, body: { type: 'string' } } }

function site (t: { testdir: () => string }, orderable: boolean): { dir: string, index: CollectionIndex } {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < 40; i++) {
    writeFileSync(path.join(dir, `p${String(i).padStart(2, '0')}.md`), `---\ntitle: Post ${i}\norder: ${(i * 7) % 40}\n---\nBody ${i}\n`)
  }
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: SCHEMA, titleField: 'title', orderField: 'order', metadata: { orderable }, i18n: null } as unknown as Collection
  const validate = new SchemaCompiler().validator(SCHEMA)
  return { dir, index: new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate }) }
}

const text = (i: number, title: string, order: number, body: string): string => `---\ntitle: ${title}\norder: ${order}\n---\n${body}`

t.test('a write recorded with its text: the body is where the text says, and a file of another size is not sliced by it', async t => {
  const { dir, index } = site(t, false)
  await index.all()
  const file = path.join(dir, 'p03.md')
  const written = text(3, 'Written', 21, 'New body\n')
  writeFileSync(file, written)
  await index.recordWrite('p03', { title: 'Written', order: 21, body: 'New body\n' }, { file, text: written })
  t.same((await index.get('p03'))?.data, { title: 'Written', order: 21, body: 'New body\n' })

  // Someone replaced the file between the write and its record: the passed text (another size) is
  // not trusted for where the body starts; the row keeps the recorded data whole instead of
  // slicing the other file's text at the passed text's offset.
  writeFileSync(file, text(3, 'Written', 21, 'Another, longer body\n'))
  await index.recordWrite('p03', { title: 'Written', order: 21, body: 'New body\n' }, { file, text: written })
  t.equal((await index.get('p03'))?.data?.body, 'New body\n', 'the recorded body, not a slice of the other file')
})

for (const orderable of [false, true]) {
  t.test(`saves keep the sorted list in place and in order (${orderable ? 'orderable' : 'by id'})`, async t => {
    const { dir, index } = site(t, orderable)
    const ids = (rows: readonly { id: string }[]): string[] => rows.map(r => r.id)
    const first = ids(await index.all())
    for (const i of [0, 17, 39, 5]) {
      const id = `p${String(i).padStart(2, '0')}`
      const file = path.join(dir, `${id}.md`)
      const body = `Saved ${i}\n`
      const written = text(i, `Saved ${i}`, (i * 7) % 40, body)
      writeFileSync(file, written)
      await index.recordWrite(id, { title: `Saved ${i}`, order: (i * 7) % 40, body }, { file, text: written })
      const rows = await index.all()
      t.same(ids(rows), first, `${id}: same order`)
      t.equal(rows.find(r => r.id === id)?.title, `Saved ${i}`, `${id}: the list shows the saved row`)
    }
    // An order change moves the row.
    const file = path.join(dir, 'p01.md')
    const written = text(1, 'Moved', -1, 'x\n')
    writeFileSync(file, written)
    await index.recordWrite('p01', { title: 'Moved', order: -1, body: 'x\n' }, { file, text: written })
    const rows = ids(await index.all())
    if (orderable) t.equal(rows[0], 'p01', 'the smallest order comes first')
    else t.same(rows, first, 'ordered by id: unchanged')
  })
}
