import t from 'tap'
import { ConfigError } from '../../lib/errors.js'
import { loadConfig } from '../../lib/config.js'
import { createCms } from '../../lib/cms.js'
import { makeSite, repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

t.test('a backtracking pattern from create_collection answers fast (linear-time engine)', async t => {
  const srv = await startServer(t)
  const cookie = await srv.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(a|a)*$' } },
    patternProperties: { '^(b|b)*$': { type: 'string' } }
  }
  t.equal((await mutate({ type: 'create_collection', collection: 'evil', schema })).status, 200)
  // With a backtracking engine each more `a` doubles the time: 30 of them take many seconds.
  const hostile = 'a'.repeat(30) + 'c'
  let started = performance.now()
  const res = await mutate({ type: 'put_entry', collection: 'evil', id: 'one', data: { name: hostile } })
  t.equal(res.status, 400)
  t.match(await res.json(), { code: 'schema_validation', issues: [{ path: 'name', code: 'pattern' }] })
  t.ok(performance.now() - started < 2000, `answered in ${Math.round(performance.now() - started)} ms`)
  started = performance.now()
  const keyed = await mutate({ type: 'put_entry', collection: 'evil', id: 'two', data: { name: 'aaa', ['b'.repeat(30) + 'c']: 1 } })
  t.equal(keyed.status, 200, 'patternProperties: a key that does not match is not checked against it')
  t.ok(performance.now() - started < 2000, `answered in ${Math.round(performance.now() - started)} ms`)
  t.equal((await mutate({ type: 'put_entry', collection: 'evil', id: 'three', data: { name: 'aaaa', bb: 2 } })).status, 400, 'a matching key is checked')
  t.equal((await mutate({ type: 'put_entry', collection: 'evil', id: 'four', data: { name: 'aaaa', bb: 'x' } })).status, 200, 'patterns still match')
})

t.test('patterns the engine cannot run are refused: 400 naming the pattern, nothing written', async t => {
  const srv = await startServer(t)
  const cookie = await srv.login()
  const before = await repoFingerprint(srv.repoDir)
  for (const pattern of ['^(?=a)a+$', '^(a)\\1$', '(?<!x)y']) {
    const res = await srv.request(`${API}/mutate`, {
      method: 'POST',
      headers: writeHeaders(cookie),
      body: JSON.stringify({ type: 'create_collection', collection: 'lookaround', schema: { type: 'object', properties: { v: { type: 'string', pattern } } } })
    })
    t.equal(res.status, 400, pattern)
    const body = await res.json() as { error: string, code: string }
    t.equal(body.code, 'bad_request')
    t.ok(body.error.includes(JSON.stringify(pattern)), `the message names the pattern: ${body.error}`)
  }
  t.equal(await repoFingerprint(srv.repoDir), before, 'nothing written')
})

t.test('a config schema with a pattern the engine cannot run stops the start with a ConfigError', async t => {
  const repoDir = await makeSite(t)
  const err = await loadConfig(repoDir, { collections: { notes: { schema: { type: 'object', properties: { v: { type: 'string', pattern: 'a(?!b)' } } } } } }).then(() => null, (e: unknown) => e)
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.equal((err as ConfigError).key, 'collections.notes.schema')
  t.match((err as ConfigError).message, '"a(?!b)"', 'names the pattern')
})

t.test('the service compiles its config schemas in its schema thread: one that does not compile stops the start', async t => {
  const repoDir = await makeSite(t)
  const env = { CMS_EDIT_PASSWORD: 'a-password-for-tests', CMS_LOG_LEVEL: 'silent' }
  const bad = { collections: { notes: { schema: { type: 'object', properties: { v: { type: 'string', pattern: 'a(?!b)' } } } } } }
  const err = await createCms({ repoDir, config: bad, env }).then(() => null, (e: unknown) => e)
  t.ok(err instanceof ConfigError, 'a ConfigError')
  t.equal((err as ConfigError).key, 'collections.notes.schema')
  t.match((err as ConfigError).message, '"a(?!b)"', 'names the pattern')
  // The refused start let go of the repository: the next start, with a schema that compiles, runs.
  const cms = await createCms({ repoDir, config: { collections: { notes: { schema: { type: 'object', properties: { v: { type: 'string', pattern: '^a+$' } } } } } }, env })
  await cms.close()
})

