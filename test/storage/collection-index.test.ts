import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import { SchemaCompiler } from '../../lib/content/schema-tools.js'
import type { Collection } from '../../lib/storage/collection-registry.js'

const SCHEMA = { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } }

function site (t: { testdir: () => string }): { repo: string, dir: string } {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'a.md'), '---\ntitle: A rather long title for a post\ntags: [x, y]\n---\n\n# Hello\n\nBody of a, é.\n')
  writeFileSync(path.join(dir, 'b.md'), 'No frontmatter at all\n')
  writeFileSync(path.join(dir, 'c.md'), '---\ntitle: [unclosed\n---\nbody\n')
  writeFileSync(path.join(dir, 'd.md'), '---\norder: 3\n---\nno title\n')
  return { repo, dir }
}

function indexOf (repo: string, dir: string): CollectionIndex {
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: SCHEMA, titleField: 'title', orderField: 'order', metadata: { orderable: false }, i18n: null } as unknown as Collection
  const validate = new SchemaCompiler().validator(SCHEMA)
  return new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate })
}

t.test('a build reads fields, where the body starts, issues and unreadable files', async t => {
  const { repo, dir } = site(t)
  const read = new Map((await indexOf(repo, dir).all()).map(r => [r.id, r]))
  t.same([...read.keys()].sort(), ['a', 'b', 'c', 'd'])
  t.match(read.get('a'), { fields: { title: 'A rather long title for a post', tags: ['x', 'y'] }, title: 'A rather long title for a post', order: null })
  const a = read.get('a')
  t.equal(a?.bodyAt, '---\ntitle: A rather long title for a post\ntags: [x, y]\n---\n'.length)
  t.match(read.get('c'), { readError: { message: String } })
  t.match(read.get('d'), { order: 3, validationIssues: [{ code: 'required' }] })
})

t.test('reads give the whole entry; lists keep no Markdown body; outside edits are seen', async t => {
  const { repo, dir } = site(t)
  const index = indexOf(repo, dir)
  const rows = await index.all()
  t.same(rows.map(r => r.id), ['a', 'b', 'c', 'd'])
  t.notOk(rows.some(r => r.fields !== undefined && 'body' in r.fields), 'no row holds a Markdown body')
  const a = await index.get('a')
  t.same(a?.data, { title: 'A rather long title for a post', tags: ['x', 'y'], body: '\n# Hello\n\nBody of a, é.\n' })
  t.same(Object.keys(a?.data ?? {}), ['title', 'tags', 'body'], 'body stays the last field')
  t.same((await index.get('b'))?.data, { body: 'No frontmatter at all\n' })
  t.match(await index.get('c'), { readError: { message: String } })
  t.same((await index.freshen(rows)).map(e => e.data?.body ?? null), ['\n# Hello\n\nBody of a, é.\n', 'No frontmatter at all\n', null, 'no title\n'])

  // A change the watcher has not reported: the stat on read catches it, with a new revision.
  const before = a?.revision ?? 0
  writeFileSync(path.join(dir, 'a.md'), '---\ntitle: Changed\n---\nNew body, longer than before\n')
  const changed = await index.get('a')
  t.same(changed?.data, { title: 'Changed', body: 'New body, longer than before\n' })
  t.equal(changed?.revision, before + 1)

  // A write the service made: the body is read back from the file it wrote.
  writeFileSync(path.join(dir, 'b.md'), '---\ntitle: Bee\n---\nwritten\n')
  await index.recordWrite('b', { title: 'Bee', body: 'written\n' })
  t.same((await index.get('b'))?.data, { title: 'Bee', body: 'written\n' })
  t.notOk((await index.all()).some(r => r.fields !== undefined && 'body' in r.fields))
})
