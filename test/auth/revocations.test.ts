import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { RevokedSessions, REVOCATIONS_FILE, LEGACY_REVOCATIONS_FILE } from '../../lib/auth/revocations.js'

const NOW = 1_800_000_000_000

/** The log's records as one object (a later line wins). */
async function logged (dir: string): Promise<Record<string, number>> {
  const text = await readFile(path.join(dir, REVOCATIONS_FILE), 'utf8')
  return Object.fromEntries(text.split('\n').filter(l => l !== '').map(l => JSON.parse(l) as { id: string, exp: number }).map(r => [r.id, r.exp]))
}

t.test('a revocation is refused at once, persisted, and reloaded by a new instance', async t => {
  const dir = t.testdir()
  const a = await RevokedSessions.load(dir, NOW)
  t.equal(a.has('s1', NOW), false)
  await a.revoke('s1', NOW + 5000, NOW)
  t.equal(a.has('s1', NOW), true)
  t.equal(a.has('s2', NOW), false)
  t.same(await logged(dir), { s1: NOW + 5000 })
  const b = await RevokedSessions.load(dir, NOW + 1)
  t.equal(b.has('s1', NOW + 1), true, 'survives a restart')
  t.equal(b.has('s1', NOW + 5000), false, 'forgotten once the cookie expired anyway')
  t.same((await readdir(dir)).sort(), [REVOCATIONS_FILE], 'no temporary files left')
})

t.test('expired ids are pruned on load and on write; already-expired sessions are not stored', async t => {
  const dir = t.testdir({ [LEGACY_REVOCATIONS_FILE]: JSON.stringify({ old: NOW - 1, live: NOW + 100 }) })
  const store = await RevokedSessions.load(dir, NOW)
  t.equal(store.size, 1)
  await store.revoke('gone', NOW - 10, NOW)
  t.equal(store.size, 1, 'an expired session needs no revocation')
  await store.revoke('fresh', NOW + 200, NOW + 150)
  t.equal(store.size, 1, 'live expired at NOW+100 and was pruned')
  const reloaded = await RevokedSessions.load(dir, NOW + 150)
  t.equal(reloaded.size, 1)
  t.same(await logged(dir), { fresh: NOW + 200 }, 'the load compacted the log to the live revocations')
})

t.test('parallel revocations all reach the file', async t => {
  const dir = t.testdir()
  const store = await RevokedSessions.load(dir, NOW)
  await Promise.all(Array.from({ length: 20 }, async (_, i) => { await store.revoke(`p${i}`, NOW + 1000, NOW) }))
  const reloaded = await RevokedSessions.load(dir, NOW)
  t.equal(reloaded.size, 20)
  for (let i = 0; i < 20; i++) t.ok(reloaded.has(`p${i}`, NOW))
})

t.test('a damaged file stops the start instead of re-admitting logged-out sessions', async t => {
  for (const [name, text] of Object.entries({ 'not JSON': '{oops', array: '[]', 'bad id': '{"../x": 5}', 'bad exp': '{"ok": "soon"}' })) {
    const dir = t.testdir({ [LEGACY_REVOCATIONS_FILE]: text })
    await t.rejects(RevokedSessions.load(dir, NOW), { name: 'StartupError', message: /revoked-sessions\.json is damaged/ }, name)
  }
  const damagedLog = t.testdir({ [REVOCATIONS_FILE]: '{"id":"a","exp":1}\n{oops\n{"id":"b","exp":1}\n' })
  await t.rejects(RevokedSessions.load(damagedLog, NOW), { name: 'StartupError', message: /revoked-sessions\.jsonl is damaged \(line 2/ }, 'a damaged line before the last')
  const fine = t.testdir({ [LEGACY_REVOCATIONS_FILE]: '{}' })
  t.equal((await RevokedSessions.load(fine, NOW)).size, 0, 'control: an empty object loads')
})

t.test('temporary files of a crashed write are removed at load; others are left alone', async t => {
  const dir = t.testdir({
    '.cms-tmp-0a1b2c3d4e5f-revoked-sessions.json': '{"half":',
    '.cms-tmp-0a1b2c3d4e5f-other.json': 'not ours',
    [LEGACY_REVOCATIONS_FILE]: JSON.stringify({ s1: NOW + 10 })
  })
  const store = await RevokedSessions.load(dir, NOW)
  t.equal(store.has('s1', NOW), true)
  t.same((await readdir(dir)).sort(), ['.cms-tmp-0a1b2c3d4e5f-other.json', REVOCATIONS_FILE])
})

t.test('a missing state directory is created on the first write', async t => {
  const dir = path.join(t.testdir(), 'cms')
  const store = await RevokedSessions.load(dir, NOW)
  await store.revoke('x', NOW + 10, NOW)
  t.ok((await logged(dir)).x)
})

t.test('each revocation appends one line; earlier lines are never rewritten by a logout', async t => {
  const dir = t.testdir()
  const store = await RevokedSessions.load(dir, NOW)
  await store.revoke('a1', NOW + 100, NOW)
  const first = await readFile(path.join(dir, REVOCATIONS_FILE), 'utf8')
  await store.revoke('a2', NOW + 100, NOW)
  await store.revoke('a3', NOW + 100, NOW)
  const text = await readFile(path.join(dir, REVOCATIONS_FILE), 'utf8')
  t.ok(text.startsWith(first), 'appended')
  t.equal(text.split('\n').filter(l => l !== '').length, 3)
})

t.test('a torn last line (a crash during an append) is dropped at load; the rest is kept', async t => {
  const dir = t.testdir({ [REVOCATIONS_FILE]: '{"id":"a","exp":' + String(NOW + 100) + '}\n{"id":"b","exp":' + String(NOW + 100) + '}\n{"id":"c","ex' })
  const store = await RevokedSessions.load(dir, NOW)
  t.ok(store.has('a', NOW) && store.has('b', NOW))
  t.equal(store.size, 2)
  await store.revoke('d', NOW + 100, NOW)
  const again = await RevokedSessions.load(dir, NOW)
  t.same([...['a', 'b', 'd']].map(id => again.has(id, NOW)), [true, true, true], 'a later append is not glued to the torn line')
  t.same(await logged(dir), { a: NOW + 100, b: NOW + 100, d: NOW + 100 })
})

t.test('the log is compacted once well past the live set: live revocations kept, expired dropped', async t => {
  const dir = t.testdir()
  const store = await RevokedSessions.load(dir, NOW)
  await store.revoke('keeper', NOW + 1_000_000, NOW)
  // Many short sessions that expire quickly: each logout appends, and the log outgrows the live set.
  for (let i = 0; i < 400; i++) await store.revoke(`short${i}`, NOW + 10 + i, NOW + i)
  const lines = (await readFile(path.join(dir, REVOCATIONS_FILE), 'utf8')).split('\n').filter(l => l !== '').length
  t.ok(lines < 401, `compacted (${lines} lines for 401 revocations)`)
  t.ok(store.has('keeper', NOW + 400))
  const reloaded = await RevokedSessions.load(dir, NOW + 2000)
  t.ok(reloaded.has('keeper', NOW + 2000), 'a live revocation survives compaction')
  t.notOk(reloaded.has('short0', NOW + 2000))
  t.same(Object.keys(await logged(dir)), ['keeper'], 'expired ones are gone from the file after the load compacts')
})

t.test('the former JSON file is migrated into the log', async t => {
  const dir = t.testdir({ [LEGACY_REVOCATIONS_FILE]: JSON.stringify({ old: NOW + 50 }) })
  const store = await RevokedSessions.load(dir, NOW)
  t.ok(store.has('old', NOW))
  t.same((await readdir(dir)).sort(), [REVOCATIONS_FILE])
  t.same(await logged(dir), { old: NOW + 50 })
})
