import t from 'tap'
import { git } from '../helpers/site.js'
import { startRemoteSite, devClone, SYNC_SECRET } from '../helpers/remote-site.js'

const definition = (schema: Record<string, unknown>, label: string): string =>
  JSON.stringify({ schema, format: 'json', metadata: { label }, created_at: 1, updated_at: 1 }, null, 2) + '\n'
const titled = { type: 'object', properties: { title: { type: 'string' } } }

interface Metadata { collections: Array<{ id: string, label: string, schema: Record<string, unknown> }> }

t.test('a sync that brings new, changed, invalid or removed .cms/collections definitions serves them at once', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const ann = as('ann')
  const sync = async (): Promise<void> => {
    const res = await s.request('/api/cms/sync', { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })
    t.equal(res.status, 200, 'synced')
    t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), dev.git('rev-parse', 'HEAD'), 'fast-forwarded')
  }
  const metadata = async (): Promise<Metadata['collections']> => ((await (await ann.get('/collections-metadata')).json()) as Metadata).collections
  // The instance has read its (empty) definitions and indexed a collection before the pull.
  t.same(await metadata(), [])
  t.equal((await ann.get('/entries?collection=notes')).status, 200)

  await dev.commitAndPush({ '.cms/collections/events.json': definition(titled, 'Events'), 'content/events/launch.json': '{"title": "Launch"}\n' }, 'Developer: events')
  await sync()
  t.match(await metadata(), [{ id: 'events', label: 'Events', schema: titled }], 'the new collection is served with its definition')
  t.match(await (await ann.get('/schema?collection=events')).json(), { schema: titled })
  const wrong = await ann.post('/mutate', { type: 'put_entry', collection: 'events', id: 'party', data: { title: 5 } })
  t.equal(wrong.status, 400, 'its schema checks writes')
  t.match(await wrong.json(), { code: 'schema_validation', issues: [{ path: 'title', code: 'type' }] })

  // Changed upstream: a number now, and another label; the list re-checks the stored entry.
  const numbered = { type: 'object', properties: { title: { type: 'number' } } }
  await dev.commitAndPush({ '.cms/collections/events.json': definition(numbered, 'Happenings') }, 'Developer: events are numbered')
  await sync()
  t.match(await metadata(), [{ id: 'events', label: 'Happenings', schema: numbered }], 'the changed definition is served')
  t.equal((await ann.post('/mutate', { type: 'put_entry', collection: 'events', id: 'party', data: { title: 5 } })).status, 200, 'the new schema checks writes')
  const listed = await (await ann.get('/entries?collection=events&id=launch')).json() as { entries: Array<{ validationIssues?: Array<{ path: string }> }> }
  t.match(listed.entries[0]?.validationIssues, [{ path: 'title' }], 'the stored entry is checked against the new schema')

  // An invalid definition pulled: refused with the reason, not a 500.
  await dev.commitAndPush({ '.cms/collections/events.json': definition({ type: 'object', properties: { title: { type: 'nonsense' } } }, 'Broken'), '.cms/collections/bad.json': '{ nope' }, 'Developer: broken')
  await sync()
  for (const name of ['events', 'bad']) {
    const res = await ann.get(`/entries?collection=${name}`)
    t.equal(res.status, 422, `${name}: refused`)
    t.match(await res.json(), { code: 'collection_refused', collection: name })
  }

  // Fixed, then removed upstream.
  await dev.commitAndPush({ '.cms/collections/events.json': definition(titled, 'Events again'), '.cms/collections/bad.json': null }, 'Developer: fixed')
  await sync()
  t.match(await metadata(), [{ id: 'events', label: 'Events again' }], 'the fixed definition is served')
  t.equal((await ann.get('/entries?collection=events')).status, 200)
  t.equal((await ann.get('/entries?collection=bad')).status, 404, 'a removed definition is gone')
  await dev.commitAndPush({ '.cms/collections/events.json': null }, 'Developer: events are plain files now')
  await sync()
  t.same(await metadata(), [], 'no dynamic collection left')
  t.equal((await ann.post('/mutate', { type: 'put_entry', collection: 'events', id: 'party', data: { title: 7 } })).status, 200, 'the folder is an inferred collection: the definition\'s schema checks no write')
})
