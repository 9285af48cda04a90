import t from 'tap'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, git } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'

const API = '/api/cms'
const DRAFTS = 500

t.test('kill -9 in the middle of publishing 500 drafts: after restart nothing is half-published and no draft is lost', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': 'permissions:\n  editor: ["*"]\ncollections:\n  notes:\n    format: json\n' }
  for (let i = 0; i < DRAFTS; i++) files[`content/notes/e${i}.json`] = '{"n":0}\n'
  const repo = await makeSite(t, files, { fixtures: false })
  const first = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  const cookie = await loginAt(first.url)
  const post = async (url: string, p: string, body: unknown, c = cookie): Promise<Response> =>
    await fetch(`${url}${API}${p}`, { method: 'POST', headers: { cookie: c, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify(body) })
  for (let i = 0; i < DRAFTS; i += 25) {
    const batch = Array.from({ length: 25 }, (_, k) => i + k)
    const statuses = await Promise.all(batch.map(async j => (await post(first.url, '/mutate', { type: 'save_field', collection: 'notes', id: `e${j}`, field: 'n', value: 1 })).status))
    t.ok(statuses.every(s => s === 200), `drafts ${i}..${i + 24} saved`)
  }
  t.match(await (await fetch(`${first.url}${API}/draft`, { headers: { cookie } })).json(), { count: DRAFTS })

  const plan = path.join(repo, '.git/cms/publish-plan.json')
  const publishing = post(first.url, '/publish', {}).catch(() => null)
  const deadline = Date.now() + 20000
  while (Date.now() < deadline && await stat(plan).then(() => false, () => true)) await new Promise(resolve => setTimeout(resolve, 2))
  await first.kill('SIGKILL')
  await publishing

  const second = await spawnServer(t, repo, { CMS_GIT_ON_PUBLISH: 'true' })
  await t.rejects(stat(plan), 'the plan was finished at start')
  const status = await (await fetch(`${second.url}${API}/draft`, { headers: { cookie } })).json()
  let published = 0
  for (let i = 0; i < DRAFTS; i++) {
    const n = (JSON.parse(await readFile(path.join(repo, `content/notes/e${i}.json`), 'utf8')) as { n: number }).n
    if (n === 1) published++
    else t.equal(n, 0, `e${i} is either published or untouched`)
  }
  t.equal(published + status.count, DRAFTS, `every entry is published (${published}) or still a draft (${status.count})`)

  const rest = await (await post(second.url, '/publish', {})).json()
  t.equal(rest.published.length, status.count)
  t.same(rest.conflicts, [])
  for (let i = 0; i < DRAFTS; i++) {
    t.equal((JSON.parse(await readFile(path.join(repo, `content/notes/e${i}.json`), 'utf8')) as { n: number }).n, 1)
  }
  t.match(await (await fetch(`${second.url}${API}/draft`, { headers: { cookie } })).json(), { count: 0 })
  t.equal(git(repo, 'status', '--porcelain'), '', 'everything written is committed')
  await second.kill('SIGTERM')
})
