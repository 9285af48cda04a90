import t from 'tap'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { extensionsOf, idOfPath, isDefaultFile, scanLayout, type EntryLayout } from '../../lib/storage/entry-paths.js'
import { entryIdProblem } from '../../lib/storage/names.js'
import type { EntryFormat } from '../../lib/content/formats.js'

// The per-name work before issue 18's seventh pass, kept here as the reference the scan's fast
// path (a name at the top of the folder, a plain id) must agree with.
function referenceIdOfPath (layout: EntryLayout, rel: string): string | null {
  const segments = rel.split('/')
  if (segments.some(s => s === '' || s.startsWith('.') || s === 'node_modules')) return null
  if (segments.length > 1 && !layout.nested && layout.indexFile === null) return null
  const base = segments[segments.length - 1]!
  const lower = base.toLowerCase()
  const ext = extensionsOf(layout.format).find(e => lower.endsWith(e))
  if (ext === undefined) return null
  const stem = base.slice(0, -ext.length)
  if (stem === '') return null
  if (layout.indexFile !== null && stem === layout.indexFile && segments.length > 1) return segments.slice(0, -1).join('/').normalize('NFC')
  return [...segments.slice(0, -1), stem].join('/').normalize('NFC')
}

const NAMES = [
  'post-00001.md', 'Post.MD', 'a.Markdown', 'b.mdx', 'c.mdX', '.hidden.md', '.md', 'md', 'x.md.bak', 'node_modules',
  '__proto__.md', 'prototype.md', 'constructor.md', '-dash.md', 'trailing .md', 'dot..md', 'Cafe\u0301.md', 'café.md',
  'a:b.md', 'tab\there.md', 'ok_id-1.md', 'x'.repeat(128) + '.md', 'x'.repeat(129) + '.md', 'é'.repeat(140) + '.md',
  'plain.yaml', 'plain.yml', 'plain.json', 'plain.toml', 'index.md', '_index.md', 'a b.md', 'ünï.markdown'
]

t.test('a name at the top of the folder gets the same id as before, in every format and layout', async t => {
  for (const format of ['md', 'mdx', 'json', 'yaml', 'toml'] as EntryFormat[]) {
    for (const [nested, indexFile] of [[false, null], [true, null], [false, 'index'], [false, '_index']] as Array<[boolean, 'index' | '_index' | null]>) {
      const layout: EntryLayout = { dir: '/site/content/x', format, nested, indexFile, files: null }
      for (const name of NAMES) {
        t.equal(idOfPath(layout, name), referenceIdOfPath(layout, name), `${format} ${String(nested)} ${String(indexFile)}: ${name}`)
        t.equal(idOfPath(layout, `sub/${name}`), referenceIdOfPath(layout, `sub/${name}`), `deeper: ${name}`)
      }
    }
  }
})

t.test('a scan lists the same problems as entryIdProblem, plain ids included', async t => {
  const dir = t.testdir({})
  const written: string[] = []
  for (const name of NAMES) {
    // A name over 255 bytes cannot be a file (the id check covers it in the first test).
    if (name.includes('\t') || Buffer.byteLength(name) > 255) continue
    await writeFile(path.join(dir, name), 'x')
    written.push(name)
  }
  await mkdir(path.join(dir, 'folder.md'))
  await symlink('post-00001.md', path.join(dir, 'linked.md'))
  const layout: EntryLayout = { dir, format: 'md', nested: false, indexFile: null, files: null }
  const { found, problems, others } = await scanLayout(layout)
  const expected = new Map<string, string>()
  for (const name of written) {
    const id = referenceIdOfPath(layout, name)
    if (id !== null) expected.set(id, path.join(dir, name))
  }
  expected.set('linked', path.join(dir, 'linked.md'))
  t.same([...found.keys()].sort(), [...expected.keys()].sort(), 'the same ids (a folder is not an entry)')
  for (const [id, file] of found) t.equal(file, expected.get(id), `${id}: its file`)
  for (const id of found.keys()) {
    const problem = entryIdProblem(id)
    t.equal(problems.has(id), problem !== null, `${id}: a problem exactly when entryIdProblem finds one`)
    if (problem !== null) t.match(problems.get(id), problem)
  }
  for (const [id, file] of found) t.equal(others.has(id), !isDefaultFile(layout, id, file), `${id}: among the others exactly when its file is not the default one`)
  t.ok(others.has('a') && others.has('b') && others.has('Post') && !others.has('post-00001'))
  t.ok(problems.has('__proto__') && problems.has('constructor') && problems.has('prototype'), 'reserved names are problems')
  t.notOk(problems.has('x'.repeat(128)), 'a plain id of 128 characters is fine')
  t.ok(problems.has('-dash') && problems.has('trailing ') && problems.has('a:b'), 'other bad names are problems')
  t.notOk(problems.has('café') || problems.has('ünï'), 'a valid id that is not plain is fine')
})

t.test('two files for one id are a problem in the fast path too', async t => {
  const dir = t.testdir({ 'a.md': 'x', 'a.markdown': 'y', 'B.md': 'z', 'B.MD': 'w' })
  const { found, problems, others } = await scanLayout({ dir, format: 'md', nested: false, indexFile: null, files: null })
  t.match(problems.get('a'), /Two files map to this id \(a.markdown, a.md\)/)
  t.equal(found.get('a'), path.join(dir, 'a.markdown'))
  t.match(problems.get('B'), /Two files map to this id/)
  t.ok(others.has('a') && others.has('B'), 'an id of two files is never taken for a default one')
})

t.test('in a bundled or nested folder only a top-level file named <id><first extension> is known default', async t => {
  const dir = t.testdir({ 'two.md': 'x', 'index.md': 'y', one: { 'index.md': 'z' }, deep: { 'x.md': 'w' } })
  for (const [nested, indexFile] of [[false, 'index'], [true, null]] as Array<[boolean, 'index' | null]>) {
    const layout: EntryLayout = { dir, format: 'md', nested, indexFile, files: null }
    const { found, others } = await scanLayout(layout)
    t.ok(found.size >= 3)
    for (const [id, file] of found) if (!others.has(id)) t.ok(isDefaultFile(layout, id, file), `${String(indexFile)}: ${id} known default, and it is`)
    if (indexFile !== null) t.same([...others].sort(), ['deep/x', 'two'], 'a bundle\'s index file and the folder\'s own index are known default')
    else t.same([...others].sort(), ['deep/x', 'one/index'], 'a nested file below the top is checked in full')
  }
  const unnormalized = `${dir}/./`
  const scan = await scanLayout({ dir: unnormalized, format: 'md', nested: false, indexFile: null, files: null })
  t.same([...scan.others].sort(), [...scan.found.keys()].sort(), 'a folder not written normalized: nothing known default')
  const files = new Map([['a', path.join(dir, 'two.md')]])
  t.ok((await scanLayout({ dir, format: 'md', nested: false, indexFile: null, files })).others.has('a'), 'a files collection: every id')
})
