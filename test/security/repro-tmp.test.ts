import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { git, startServer, writeHeaders } from '../helpers/site.js'
const API = '/api/cms'
const def = (schema: unknown): string => JSON.stringify({ schema, format: 'json', metadata: {}, created_at: 1, updated_at: 1 }, null, 2) + '\n'
t.test('repro', async t => {
  let s = await startServer(t)
  const repoDir = s.repoDir
  await s.close()
  const dir = path.join(repoDir, '.cms/collections')
  await mkdir(dir, { recursive: true })
  const cases: Record<string, string> = {
    badtype: def({ type: 'object', properties: { title: { type: 'nonsense' } } }),
    badref: def({ type: 'object', properties: { title: { $ref: '#/definitions/missing' } } }),
    badpattern: def({ type: 'object', properties: { title: { type: 'string', pattern: '(?<=a)b' } } }),
    badregex: def({ type: 'object', properties: { title: { type: 'string', pattern: '(' } } }),
    notobject: def(5),
    noschema: JSON.stringify({ format: 'json', created_at: 1, updated_at: 1 }),
    badformat: JSON.stringify({ schema: { type: 'object' }, format: 'docx', created_at: 1, updated_at: 1 }),
    badmeta: JSON.stringify({ schema: { type: 'object' }, format: 'json', metadata: { order: 'x', label: 5, singletonId: '../x' }, created_at: 1, updated_at: 1 }),
    badjson: '{ nope',
    arr: '[1,2]'
  }
  for (const [name, text] of Object.entries(cases)) {
    await writeFile(path.join(dir, `${name}.json`), text)
    await mkdir(path.join(repoDir, 'content', name), { recursive: true })
    await writeFile(path.join(repoDir, 'content', name, 'one.json'), '{"title": "x"}\n')
  }
  git(repoDir, 'add', '-A'); git(repoDir, 'commit', '-qm', 'by hand')
  s = await startServer(t, { repoDir })
  const cookie = await s.login()
  const meta = await s.request(`${API}/collections-metadata`, { headers: { cookie } })
  t.comment(`metadata ${meta.status} ${(await meta.text()).slice(0, 300)}`)
  for (const name of Object.keys(cases)) {
    const out: string[] = []
    for (const [label, p] of [['list', `/entries?collection=${name}`], ['one', `/entries?collection=${name}&id=one`], ['schema', `/schema?collection=${name}`], ['search', `/search?q=x&collection=${name}`]]) {
      const r = await s.request(API + p!, { headers: { cookie } })
      out.push(`${label} ${r.status} ${r.status !== 200 ? (await r.text()).slice(0, 120) : ''}`)
    }
    for (const cmd of [{ type: 'put_entry', collection: name, id: 'two', data: { title: 'y' } }, { type: 'save_field', collection: name, id: 'one', field: 'title', value: 'z' }, { type: 'delete_collection', collection: name }]) {
      const r = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
      out.push(`${cmd.type} ${r.status} ${r.status !== 200 ? (await r.text()).slice(0, 160) : ''}`)
    }
    t.comment(`${name}:\n  ${out.join('\n  ')}`)
  }
})
