import t from 'tap'
import { git } from '../helpers/site.js'
import { startRemoteSite, hostRef } from '../helpers/remote-site.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'

function hostHistory (bareDir: string, collection: string, id: string): Array<{ action: string, data: unknown }> {
  try {
    return (JSON.parse(git(bareDir, 'show', `refs/cms/history:${collection}/${shardOf(id)}/${id}.json`)) as { snapshots: Array<{ action: string, data: unknown }> }).snapshots
  } catch {
    return []
  }
}

t.test('the host\'s history holds the snapshot a publish recorded just before its push', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const ann = as('ann', 'Ann Editor')
  t.equal((await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 7 })).status, 200)
  // A publisher's save is a draft here: the publish writes the entry and records the state it replaces.
  const res = await ann.post('/publish')
  t.equal(res.status, 200)
  t.equal((await res.json() as { push: { ok: boolean } }).push.ok, true)
  t.same((await (await ann.get('/history?collection=notes&id=b')).json()).history.map((h: { action: string, data: unknown }) => [h.action, h.data]), [['publish', { n: 0 }]], 'served at once (on the ref when the publish answered)')
  // History follows the branch push on the sync queue, right after the response.
  for (let i = 0; i < 200 && hostRef(host, 'refs/cms/history') === ''; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(hostRef(host, 'refs/cms/history'), git(s.repoDir, 'rev-parse', 'refs/cms/history'), 'the pushed ref is the local one')
  t.same(hostHistory(host.bareDir, 'notes', 'b').map(h => [h.action, h.data]), [['publish', { n: 0 }]], 'the snapshot recorded just before the push is on the host')
  t.equal(git(host.bareDir, 'fsck', '--no-progress').includes('error'), false)
})
