import t from 'tap'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { idOfPath, scanLayout, type EntryLayout } from '../../lib/storage/entry-paths.js'
import { entryIdProblem } from '../../lib/storage/names.js'

const NAMES = [
  'post-00001.md', 'Post.MD', 'a.Markdown', 'b.mdx', 'c.mdX', '.hidden.md', '.md', 'md', 'x.md.bak', 'node_modules',
  '__proto__.md', 'prototype.md', 'constructor.md', '-dash.md', 'trailing .md', 'dot..md', 'Cafe\u0301.md', 'café.md',
  'a:b.md', 'tab\there.md', 'ok_id-1.md', 'x'.repeat(128) + '.md', 'x'.repeat(129) + '.md', 'é'.repeat(140) + '.md',
  'plain.yaml', 'plain.yml', 'plain.json', 'plain.toml', 'index.md', '_index.md', 'a b.md', 'ünï.markdown'
]

t.test('a path below the folder gives its id, by layout', async t => {
  const names = ['post-00001.md', 'Post.MD', 'a.Markdown', 'b.mdx', '.hidden.md', '.md', 'md', 'x.md.bak', 'node_modules',
    'Cafe\u0301.md', 'plain.yaml', 'index.md', '_index.md', 'sub/x.md', 'sub/index.md', 'node_modules/x.md', '.git/x.md']
  const top = { 'post-00001.md': 'post-00001', 'Post.MD': 'Post', 'a.Markdown': 'a', 'b.mdx': 'b', 'Cafe\u0301.md': 'Caf\u00e9', 'index.md': 'index', '_index.md': '_index' }
  const expected: Array<[Partial<EntryLayout>, Record<string, string>]> = [
    [{ format: 'md', nested: false, indexFile: null }, top],
    [{ format: 'md', nested: true, indexFile: null }, { ...top, 'sub/x.md': 'sub/x', 'sub/index.md': 'sub/index' }],
    [{ format: 'md', nested: false, indexFile: 'index' }, { ...top, 'sub/x.md': 'sub/x', 'sub/index.md': 'sub' }],
    [{ format: 'yaml', nested: false, indexFile: null }, { 'plain.yaml': 'plain' }]
  ]
  for (const [part, ids] of expected) {
    const layout = { dir: '/site/content/x', files: null, ...part } as EntryLayout
    const got = Object.fromEntries(names.map(n => [n, idOfPath(layout, n)]).filter(([, id]) => id !== null))
    t.same(got, ids, JSON.stringify(part))
  }
  t.equal(idOfPath({ dir: '/s', format: 'yaml', nested: false, indexFile: null, files: null }, 'a.yml'), 'a', '.yml is YAML too')
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
  const { found, problems } = await scanLayout(layout)
  const expected = new Map<string, string>()
  for (const name of written) {
    const id = idOfPath(layout, name)
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
  t.ok(problems.has('__proto__') && problems.has('constructor') && problems.has('prototype'), 'reserved names are problems')
  t.notOk(problems.has('x'.repeat(128)), 'a plain id of 128 characters is fine')
  t.ok(problems.has('-dash') && problems.has('trailing ') && problems.has('a:b'), 'other bad names are problems')
  t.notOk(problems.has('café') || problems.has('ünï'), 'a valid id that is not plain is fine')
})

t.test('two files for one id are a problem', async t => {
  const dir = t.testdir({ 'a.md': 'x', 'a.markdown': 'y', 'B.md': 'z', 'B.MD': 'w' })
  const { found, problems } = await scanLayout({ dir, format: 'md', nested: false, indexFile: null, files: null })
  t.match(problems.get('a'), /Two files map to this id \(a.markdown, a.md\)/)
  t.equal(found.get('a'), path.join(dir, 'a.markdown'))
  t.match(problems.get('B'), /Two files map to this id/)
})

t.test('a bundled or nested folder is walked below the top; a files collection lists its files', async t => {
  const dir = t.testdir({ 'two.md': 'x', 'index.md': 'y', one: { 'index.md': 'z' }, deep: { 'x.md': 'w' }, node_modules: { 'n.md': 'n' } })
  const bundles = await scanLayout({ dir, format: 'md', nested: false, indexFile: 'index', files: null })
  t.same([...bundles.found.keys()].sort(), ['deep/x', 'index', 'one', 'two'])
  t.equal(bundles.found.get('one'), path.join(dir, 'one', 'index.md'))
  const nested = await scanLayout({ dir, format: 'md', nested: true, indexFile: null, files: null })
  t.same([...nested.found.keys()].sort(), ['deep/x', 'index', 'one/index', 'two'])
  const flat = await scanLayout({ dir: `${dir}/./`, format: 'md', nested: false, indexFile: null, files: null })
  t.same([...flat.found.keys()].sort(), ['index', 'two'], 'a flat collection stays at the top')
  const files = new Map([['a', path.join(dir, 'two.md')]])
  t.same([...(await scanLayout({ dir, format: 'md', nested: false, indexFile: null, files })).found], [['a', path.join(dir, 'two.md')]])
})
