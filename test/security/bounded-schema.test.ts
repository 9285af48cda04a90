import t from 'tap'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'
import { MAX_DYNAMIC_COLLECTIONS, MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH } from '../../lib/content/data-depth.js'

const API = '/api/cms'
/** The event loop may stall this long at most while a schema at the limit compiles (today: 17 s for 10,000 properties). */
const MAX_STALL_MS = 1500

const manyProperties = (count: number): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < count; i++) properties[`field${i}`] = { type: 'string', title: `Field ${i}` }
  return { type: 'object', properties }
}
/** The largest schema of string properties within the size limit. */
const largestSchema = (): Record<string, unknown> => {
  let count = 1
  while (JSON.stringify(manyProperties(count + 1)).length <= MAX_SCHEMA_CHARS - 20) count++
  return manyProperties(count)
}
const nestedAllOf = (depth: number): Record<string, unknown> => {
  let schema: Record<string, unknown> = { type: 'object' }
  for (let i = 0; i < depth; i++) schema = { allOf: [schema, { type: 'object' }] }
  return schema
}

t.test('create_collection refuses an oversized or too deep schema, and a collection past the count, writing nothing', async t => {
  // The site starts with one dynamic collection less than the limit, each with the largest schema.
  const schema = largestSchema()
  const files: Record<string, string> = {}
  for (let i = 0; i < MAX_DYNAMIC_COLLECTIONS - 1; i++) {
    files[`.cms/collections/c${i}.json`] = JSON.stringify({ schema, format: 'json', metadata: {}, created_at: 1, updated_at: 1 })
  }
  const s = await startServer(t, { files })
  const cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const collectionFiles = async (): Promise<string[]> => (await readdir(path.join(s.repoDir, '.cms/collections'))).sort()
  const before = await repoFingerprint(s.repoDir)
  const filesBefore = await collectionFiles()

  const huge = await mutate({ type: 'create_collection', collection: 'huge', schema: manyProperties(10_000) })
  t.equal(huge.status, 413, '10,000 properties (536 KB)')
  t.match(await huge.json(), { code: 'payload_too_large', field: 'schema', limit: MAX_SCHEMA_CHARS })
  const bigAllOf = await mutate({ type: 'create_collection', collection: 'allof', schema: { allOf: Array.from({ length: 3000 }, () => ({ type: 'object', title: 'x' })) } })
  t.equal(bigAllOf.status, 413, 'a 120 KB allOf')
  const deep = await mutate({ type: 'create_collection', collection: 'deep', schema: nestedAllOf(MAX_SCHEMA_DEPTH) })
  t.equal(deep.status, 422, 'a nested allOf deeper than the limit')
  t.match(await deep.json(), { code: 'limit_exceeded', field: 'schema', limit: MAX_SCHEMA_DEPTH, error: /deeper than/ })
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.same(await collectionFiles(), filesBefore)
  t.notOk(await readdir(path.join(s.repoDir, 'content')).then(names => names.some(n => ['huge', 'allof', 'deep'].includes(n))), 'no folder')

  // The largest schema allowed compiles without holding the event loop for long.
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  const last = await mutate({ type: 'create_collection', collection: 'last', schema: { ...schema, title: 'Last' } })
  const write = await mutate({ type: 'put_entry', collection: 'c0', id: 'first', data: { field0: 'x' } })
  histogram.disable()
  t.equal(last.status, 200, 'the last collection within the limit')
  t.equal(write.status, 200, 'a first write validates against the largest schema')
  t.ok(histogram.max / 1e6 < MAX_STALL_MS, `the event loop was held ${Math.round(histogram.max / 1e6)} ms at most`)

  const more = await mutate({ type: 'create_collection', collection: 'one-more', schema: { type: 'object' } })
  t.equal(more.status, 422, `collection ${MAX_DYNAMIC_COLLECTIONS + 1}`)
  t.match(await more.json(), { error: `a site holds at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`, code: 'limit_exceeded', limit: MAX_DYNAMIC_COLLECTIONS })
  t.notOk((await collectionFiles()).includes('one-more.json'), 'not written')
})

t.test('two create_collection calls racing for the last place: one is created, the other refused and not written', async t => {
  const files: Record<string, string> = {}
  for (let i = 0; i < MAX_DYNAMIC_COLLECTIONS - 1; i++) {
    files[`.cms/collections/c${i}.json`] = JSON.stringify({ schema: { type: 'object' }, format: 'json', metadata: {}, created_at: 1, updated_at: 1 })
  }
  const s = await startServer(t, { files })
  const cookie = await s.login()
  const create = async (collection: string): Promise<Response> => await s.request(`${API}/mutate`, {
    method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'create_collection', collection, schema: { type: 'object' } })
  })
  const answers = await Promise.all([create('left'), create('right')])
  t.same(answers.map(a => a.status).sort(), [200, 422], 'one created, one refused')
  const refused = answers[0].status === 422 ? 'left' : 'right'
  t.match(await answers.find(a => a.status === 422)?.json(), { code: 'limit_exceeded', limit: MAX_DYNAMIC_COLLECTIONS })
  const names = await readdir(path.join(s.repoDir, '.cms/collections'))
  t.equal(names.length, MAX_DYNAMIC_COLLECTIONS, 'the limit holds on disk')
  t.notOk(names.includes(`${refused}.json`), 'the refused definition is not written')
})
