import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DeploymentStatus } from '../../lib/publish/deployment-status.js'
import { normalizeConfig, type ConfigInput } from '../../lib/config.js'
import { makeSite, git } from '../helpers/site.js'
import { startReceiver } from '../helpers/receiver.js'

/** A site with three commits; `timeoutMs` short only where a test waits for the timeout (a first fetch on a busy machine takes longer). */
async function setup (t: Test, status: NonNullable<ConfigInput['delivery']>['status'], timeoutMs = 30_000): Promise<{ dir: string, shas: string[], deployment: DeploymentStatus }> {
  const dir = await makeSite(t, { 'content/a.json': '1\n' }, { fixtures: false })
  const shas = [git(dir, 'rev-parse', 'HEAD')]
  for (const n of [2, 3]) {
    await writeFile(path.join(dir, 'content/a.json'), `${n}\n`)
    git(dir, 'commit', '-q', '-am', `c${n}`)
    shas.push(git(dir, 'rev-parse', 'HEAD'))
  }
  const config = normalizeConfig(status === undefined ? {} : { delivery: { status } })
  const deployment = new DeploymentStatus({ gitDir: path.join(dir, '.git'), config, stateDir: path.join(dir, '.git', 'cms'), timeoutMs })
  return { dir, shas, deployment }
}

t.test('not configured', async t => {
  const { deployment, shas } = await setup(t, undefined)
  await deployment.recordPublished(shas[2]!)
  t.same(await deployment.read(), { configured: false, state: 'unknown' })
})

t.test('live, pending and unknown against what was published', async t => {
  const receiver = await startReceiver(t)
  const { dir, deployment, shas } = await setup(t, { url: receiver.url })
  const [first, second, third] = shas as [string, string, string]

  receiver.reply = { status: 200, body: { commit: third } }
  let report = await deployment.read()
  t.match(report, { configured: true, target: receiver.url, state: 'unknown', commit: third }, 'nothing published yet')
  t.notOk('publishedCommit' in report)
  t.equal(receiver.requests[0]!.method, 'GET')

  await deployment.recordPublished(third)
  report = await deployment.read()
  t.match(report, { configured: true, target: receiver.url, state: 'live', commit: third, publishedCommit: third })
  t.type((report as { checkedAt: number }).checkedAt, 'number')

  // a restart reads the recorded commit back
  const again = new DeploymentStatus({ gitDir: path.join(dir, '.git'), config: normalizeConfig({ delivery: { status: { url: receiver.url } } }), stateDir: path.join(dir, '.git', 'cms') })
  receiver.reply = { status: 200, body: { commit: first } }
  t.match(await again.read(), { state: 'pending', commit: first, publishedCommit: third }, 'an older commit is pending')
  receiver.reply = { status: 200, body: { commit: second.toUpperCase() } }
  t.match(await again.read(), { state: 'pending', commit: second })

  // a side branch is not an ancestor: unknown, not pending
  git(dir, 'checkout', '-q', '-b', 'side', first)
  await writeFile(path.join(dir, 'content/a.json'), 'side\n')
  git(dir, 'commit', '-q', '-am', 'side')
  const side = git(dir, 'rev-parse', 'HEAD')
  receiver.reply = { status: 200, body: { commit: side } }
  t.match(await again.read(), { state: 'unknown', commit: side })

  receiver.reply = { status: 200, body: { commit: 'f'.repeat(40) } }
  t.match(await again.read(), { state: 'unknown' }, 'a commit the repo does not have')
  receiver.reply = { status: 200, body: { built: true } }
  t.match(await again.read(), { configured: true, state: 'unknown', publishedCommit: third }, 'JSON without commit')
  receiver.reply = { status: 200, body: 'not json' }
  t.match(await again.read(), { state: 'unknown' }, 'not JSON')
  receiver.reply = { status: 503, body: { commit: third } }
  t.match(await again.read(), { state: 'unknown' }, 'an error status')
  receiver.reply = { status: 200, body: { commit: third } }
  t.match(await again.read(), { state: 'live' }, 'and live again')
})

t.test('an unreachable or slow status URL is unknown, promptly', async t => {
  const receiver = await startReceiver(t)
  receiver.reply = { status: 200, body: { commit: 'a'.repeat(40) }, delayMs: 3000 }
  const slow = await setup(t, { url: receiver.url, target: 'production' }, 300)
  await slow.deployment.recordPublished(slow.shas[2]!)
  const started = Date.now()
  t.match(await slow.deployment.read(), { configured: true, target: 'production', state: 'unknown' })
  t.ok(Date.now() - started < 2000)
  const down = await setup(t, { url: 'http://127.0.0.1:1/status.json' }, 300)
  await down.deployment.recordPublished(down.shas[2]!)
  t.match(await down.deployment.read(), { configured: true, state: 'unknown', publishedCommit: down.shas[2] })
})
