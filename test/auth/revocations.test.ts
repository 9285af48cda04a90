import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { RevokedSessions, REVOCATIONS_FILE, LEGACY_REVOCATIONS_LOG } from '../../lib/auth/revocations.js'

const NOW = 1_800_000_000_000

/** The stored revocations. */
async function logged (dir: string): Promise<Record<string, number>> {
  return JSON.parse(await readFile(path.join(dir, REVOCATIONS_FILE), 'utf8')) as Record<string, number>
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
  const dir = t.testdir({ [REVOCATIONS_FILE]: JSON.stringify({ old: NOW - 1, live: NOW + 100 }) })
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
    const dir = t.testdir({ [REVOCATIONS_FILE]: text })
    await t.rejects(RevokedSessions.load(dir, NOW), { name: 'StartupError', message: /revoked-sessions\.json is damaged/ }, name)
  }
  const damagedLog = t.testdir({ [LEGACY_REVOCATIONS_LOG]: '{"id":"a","exp":1}\n{oops\n{"id":"b","exp":1}\n' })
  await t.rejects(RevokedSessions.load(damagedLog, NOW), { name: 'StartupError', message: /revoked-sessions\.jsonl is damaged \(line 2/ }, 'a damaged line of an earlier version\'s log')
  const fine = t.testdir({ [REVOCATIONS_FILE]: '{}' })
  t.equal((await RevokedSessions.load(fine, NOW)).size, 0, 'control: an empty object loads')
})

t.test('temporary files of a crashed write are removed at load; others are left alone', async t => {
  const dir = t.testdir({
    '.cms-tmp-0a1b2c3d4e5f-revoked-sessions.json': '{"half":',
    '.cms-tmp-0a1b2c3d4e5f-other.json': 'not ours',
    [REVOCATIONS_FILE]: JSON.stringify({ s1: NOW + 10 })
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

t.test('each revocation rewrites the file with the live set only', async t => {
  const dir = t.testdir()
  const store = await RevokedSessions.load(dir, NOW)
  await store.revoke('keeper', NOW + 1_000_000, NOW)
  for (let i = 0; i < 50; i++) await store.revoke(`short${i}`, NOW + 10 + i, NOW + i)
  // At the last write (NOW + 49) short0..short39 had expired.
  const live = ['keeper', ...Array.from({ length: 10 }, (_, i) => `short${40 + i}`)]
  t.same(Object.keys(await logged(dir)).sort(), live.sort(), 'expired ones are gone')
  const reloaded = await RevokedSessions.load(dir, NOW + 2000)
  t.ok(reloaded.has('keeper', NOW + 2000))
  t.notOk(reloaded.has('short0', NOW + 2000))
})

t.test('an earlier version\'s log is taken in: a torn last line dropped, the rest kept, the log removed', async t => {
  const dir = t.testdir({
    [LEGACY_REVOCATIONS_LOG]: '{"id":"a","exp":' + String(NOW + 100) + '}\n{"id":"b","exp":' + String(NOW + 100) + '}\n{"id":"c","ex',
    [REVOCATIONS_FILE]: JSON.stringify({ d: NOW + 100, gone: NOW - 1 })
  })
  const store = await RevokedSessions.load(dir, NOW)
  t.same(['a', 'b', 'd'].map(id => store.has(id, NOW)), [true, true, true])
  t.equal(store.size, 3)
  t.same((await readdir(dir)).sort(), [REVOCATIONS_FILE], 'the old log is gone')
  t.same(await logged(dir), { a: NOW + 100, b: NOW + 100, d: NOW + 100 })
  const again = await RevokedSessions.load(dir, NOW)
  t.equal(again.size, 3, 'and it stays so')
})
