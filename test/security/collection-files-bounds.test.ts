import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { git, startServer, writeHeaders } from '../helpers/site.js'
import { MAX_DYNAMIC_COLLECTIONS, MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH } from '../../lib/content/data-depth.js'

const API = '/api/cms'

const definition = (schema: unknown): string => JSON.stringify({ schema, format: 'json', metadata: {}, created_at: 1, updated_at: 1 }, null, 2) + '\n'
const manyProperties = (count: number): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < count; i++) properties[`field${i}`] = { type: 'string', title: `Field ${i}` }
  return { type: 'object', properties }
}
/** A definition whose schema nests `allOf` `depth` deep (as text: JSON.stringify would overflow the stack). */
const nestedAllOf = (depth: number): string =>
  `{"schema": ${'{"allOf": ['.repeat(depth)}{}${']}'.repeat(depth)}, "format": "json", "metadata": {}, "created_at": 1, "updated_at": 1}\n`


t.test('collection files committed by hand are held to the schema bounds: refused, logged, never compiled; the rest keeps working', async t => {
  let s = await startServer(t)
  const repoDir = s.repoDir
  await s.close()

  // Committed by hand, as a pull from the remote would bring them.
  const dir = path.join(repoDir, '.cms/collections')
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, 'big.json'), definition(manyProperties(600)))
  await writeFile(path.join(dir, 'deep.json'), nestedAllOf(5000))
  await writeFile(path.join(dir, 'huge.json'), definition({ type: 'object', description: 'x'.repeat(2_000_000) }))
  // More than the count: `a000` ... in name order; the last ones are refused.
  for (let i = 0; i < MAX_DYNAMIC_COLLECTIONS + 2; i++) await writeFile(path.join(dir, `a${String(i).padStart(3, '0')}.json`), definition({ type: 'object', title: `A${i}` }))
  for (const name of ['big', 'deep', 'a101']) {
    await mkdir(path.join(repoDir, 'content', name), { recursive: true })
    await writeFile(path.join(repoDir, 'content', name, 'one.json'), '{"field0": "x"}\n')
  }
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-qm', 'Collections by hand')

  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
  const logger = pino({ level: 'warn' }, sink)
  s = await startServer(t, { repoDir, logger })
  const cookie = await s.login()
  const refusedLog = (collection: string): Record<string, unknown> | undefined => lines.find(l => l.msg === 'collection definition refused' && l.collection === collection)

  for (const [name, reason] of [
    ['big', `longer than ${MAX_SCHEMA_CHARS} characters`],
    ['deep', `deeper than ${MAX_SCHEMA_DEPTH} levels`],
    ['huge', 'definition file is larger than'],
    [`a${MAX_DYNAMIC_COLLECTIONS}`, `at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`],
    [`a${MAX_DYNAMIC_COLLECTIONS + 1}`, `at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`]
  ] as const) {
    const res = await s.request(`${API}/entries?collection=${name}`, { headers: { cookie } })
    t.equal(res.status, 422, `${name}: not read`)
    const body = await res.json() as { code: string, error: string, collection: string }
    t.match(body, { code: 'limit_exceeded', collection: name }, name)
    t.ok(body.error.includes(reason), `${name}: ${body.error}`)
    t.match(refusedLog(name), { level: 40, reason: new RegExp(reason.replace(/[()]/g, '\\$&')) }, `${name}: logged`)
    const write = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: name, id: 'two', data: {} }) })
    t.equal(write.status, 422, `${name}: no write`)
  }

  // The rest of the site keeps working: the collections within the bounds, the fixtures'.
  const listed = await (await s.request(`${API}/collections-metadata`, { headers: { cookie } })).json() as { collections: Array<{ id: string }> }
  const names = listed.collections.map(c => c.id)
  t.equal(names.length, MAX_DYNAMIC_COLLECTIONS)
  t.ok(names.includes('a000') && names.includes(`a0${MAX_DYNAMIC_COLLECTIONS - 3}`), 'the collections within the count are listed')
  t.notOk(names.some(n => ['big', 'deep', 'huge', 'a100', 'a101'].includes(n)), 'the refused ones are not')
  t.equal((await s.request(`${API}/entries?collection=posts`, { headers: { cookie } })).status, 200, 'posts')
  const write = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'a001', id: 'one', data: { title: 'One' } }) })
  t.equal(write.status, 200, 'a write to a collection within the bounds')
})
