import t from 'tap'
import { access, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { git, repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

const definition = (schema: unknown, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ schema, format: 'json', metadata: {}, created_at: 1, updated_at: 1, ...extra }, null, 2) + '\n'
const manyProperties = (count: number): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < count; i++) properties[`field${i}`] = { type: 'string' }
  return { type: 'object', properties }
}
async function exists (file: string): Promise<boolean> {
  try { await access(file); return true } catch { return false }
}

/** Every ref but the history's (delete_collection removes the collection's snapshots from it). */
const refsBut = (repoDir: string): string => git(repoDir, 'for-each-ref').split('\n').filter(l => !l.endsWith('refs/cms/history')).join('\n')

/** Definitions as a pull (or a hand edit) brings them: name -> file text and the reason the service gives. */
const arriving: Record<string, { text: string, reason: RegExp }> = {
  // Their shape is right, ajv refuses their schema when it compiles it.
  'bad-type': { text: definition({ type: 'object', properties: { title: { type: 'nonsense' } } }), reason: /its schema does not compile: schema is invalid: .*type must be equal to one of the allowed values/ },
  'bad-ref': { text: definition({ type: 'object', properties: { title: { $ref: '#/definitions/missing' } } }), reason: /its schema does not compile: can't resolve reference #\/definitions\/missing/ },
  'bad-pattern': { text: definition({ type: 'object', properties: { title: { type: 'string', pattern: '(' } } }), reason: /its schema does not compile: pattern "\(" is not supported/ },
  // Their shape is not what create_collection writes: refused when read.
  'not-object': { text: definition(5), reason: /its definition's schema must be object/ },
  'no-schema': { text: JSON.stringify({ format: 'json', created_at: 1, updated_at: 1 }), reason: /its definition's schema is required/ },
  'bad-format': { text: definition({ type: 'object' }, { format: 'docx' }), reason: /its definition's format must be equal to one of the allowed values/ },
  'bad-metadata': { text: definition({ type: 'object' }, { metadata: { label: 5 } }), reason: /its definition's metadata\.label must be string/ },
  // A definition may not point the collection at another folder (create_collection has no such field).
  'hostile-folder': { text: definition({ type: 'object' }, { metadata: { folder: '../..' } }), reason: /its definition's metadata\.folder is not a known field/ },
  'proto-key': { text: '{"schema": {"type": "object"}, "format": "json", "metadata": {"__proto__": {"deletable": false}}, "created_at": 1, "updated_at": 1}', reason: /its definition's metadata\.__proto__ is not a known field/ },
  'not-json': { text: '{ "schema": ', reason: /its definition file is not JSON/ },
  'an-array': { text: '[1, 2]', reason: /its definition is not a JSON object/ }
}

t.test('a collection definition that arrives through git and ajv or the shape check refuses answers 422 with the reason, never a 500, and changes nothing; it can be deleted', async t => {
  let s = await startServer(t)
  const repoDir = s.repoDir
  await s.close()
  const dir = path.join(repoDir, '.cms/collections')
  await mkdir(dir, { recursive: true })
  const names = [...Object.keys(arriving), 'too-big']
  for (const [name, { text }] of Object.entries(arriving)) await writeFile(path.join(dir, `${name}.json`), text)
  await writeFile(path.join(dir, 'too-big.json'), definition(manyProperties(600)))
  for (const name of names) {
    await mkdir(path.join(repoDir, 'content', name), { recursive: true })
    await writeFile(path.join(repoDir, 'content', name, 'one.json'), '{"title": "One"}\n')
  }
  await writeFile(path.join(repoDir, 'content/bad-type/notes.txt'), 'not an entry\n')
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-qm', 'Collections from elsewhere')

  s = await startServer(t, { repoDir })
  const cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })

  const before = await repoFingerprint(repoDir)
  for (const [name, { reason }] of Object.entries(arriving)) {
    const requests: Array<[string, () => Promise<Response>]> = [
      ['list', async () => await s.request(`${API}/entries?collection=${name}`, { headers: { cookie } })],
      ['read', async () => await s.request(`${API}/entries?collection=${name}&id=one`, { headers: { cookie } })],
      ['put_entry', async () => await mutate({ type: 'put_entry', collection: name, id: 'two', data: { title: 'Two' } })],
      ['save_field', async () => await mutate({ type: 'save_field', collection: name, id: 'one', field: 'title', value: 'Changed' })]
    ]
    for (const [label, send] of requests) {
      const res = await send()
      const body = await res.json() as { code: string, error: string, collection: string }
      t.equal(res.status, 422, `${name} ${label}: 422`)
      t.match(body, { code: 'collection_refused', collection: name, error: reason }, `${name} ${label}: ${body.error}`)
    }
  }
  t.equal(await repoFingerprint(repoDir), before, 'no file, ref or commit changed')
  const listed = await s.request(`${API}/collections-metadata`, { headers: { cookie } })
  t.equal(listed.status, 200, 'the collections are listed')
  const ids = ((await listed.json()) as { collections: Array<{ id: string }> }).collections.map(c => c.id)
  t.notOk(ids.some(id => ['not-object', 'bad-format', 'hostile-folder', 'not-json', 'too-big'].includes(id)), 'refused definitions are not listed')
  t.equal((await s.request(`${API}/entries?collection=posts`, { headers: { cookie } })).status, 200, 'the rest of the site works')

  // delete_collection removes them as any dynamic collection: entry files, definition, folder when
  // emptied; other files stay; HEAD unchanged, the removals wait for the next publish's commit.
  const head = git(repoDir, 'rev-parse', 'HEAD')
  const refs = refsBut(repoDir)
  for (const name of ['bad-type', 'bad-format', 'not-json', 'too-big', 'hostile-folder']) {
    const res = await mutate({ type: 'delete_collection', collection: name })
    t.equal(res.status, 200, `${name}: deleted (${res.status === 200 ? '' : await res.text()})`)
    t.notOk(await exists(path.join(dir, `${name}.json`)), `${name}: definition gone`)
    t.notOk(await exists(path.join(repoDir, 'content', name, 'one.json')), `${name}: entry gone`)
    t.equal((await s.request(`${API}/entries?collection=${name}`, { headers: { cookie } })).status, 404, `${name}: no collection left`)
  }
  t.notOk(await exists(path.join(repoDir, 'content/bad-format')), 'a folder emptied is removed')
  t.ok(await exists(path.join(repoDir, 'content/bad-type/notes.txt')), 'a file that is no entry stays')
  t.equal(git(repoDir, 'rev-parse', 'HEAD'), head, 'no commit: a publish commits the removals, as after any delete_collection')
  t.equal(refsBut(repoDir), refs, 'no ref moved but the history\'s')
  t.equal(git(repoDir, 'status', '--porcelain', '--', '.cms', ...['bad-type', 'bad-format', 'not-json', 'too-big', 'hostile-folder'].map(n => `content/${n}`)).split('\n').map(l => l.trim()).sort().join('\n'), [
    'D .cms/collections/bad-format.json', 'D .cms/collections/bad-type.json', 'D .cms/collections/hostile-folder.json', 'D .cms/collections/not-json.json', 'D .cms/collections/too-big.json',
    'D content/bad-format/one.json', 'D content/bad-type/one.json', 'D content/hostile-folder/one.json', 'D content/not-json/one.json', 'D content/too-big/one.json'
  ].join('\n'), 'the definitions and entries are removed, nothing else')

  // A name that is no collection stays a 404; a config collection stays a 409.
  t.equal((await mutate({ type: 'delete_collection', collection: 'nothing-here' })).status, 404)
  t.equal((await mutate({ type: 'delete_collection', collection: '../x' })).status, 400)
})
