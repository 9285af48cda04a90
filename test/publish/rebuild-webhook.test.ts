import t, { type Test } from 'tap'
import { createHmac } from 'node:crypto'
import { readFile, writeFile, access } from 'node:fs/promises'
import path from 'node:path'
import { pino } from 'pino'
import { RebuildWebhook } from '../../lib/publish/rebuild-webhook.js'
import { normalizeConfig, type ConfigInput } from '../../lib/config.js'
import { startReceiver } from '../helpers/receiver.js'

const published = [{ collection: 'posts', id: 'hello', revision: 3, deleted: false }, { collection: 'posts', id: 'old', revision: 2, deleted: true }]
const commit = 'a'.repeat(40)

function hook (t: Test, publish: NonNullable<ConfigInput['delivery']>['publish'], extra: { timeoutMs?: number, stateDir?: string } = {}): { webhook: RebuildWebhook, stateDir: string, logs: string[] } {
  const stateDir = extra.stateDir ?? t.testdir({})
  const logs: string[] = []
  const log = pino({ level: 'debug' }, { write: (s: string) => { logs.push(s) } })
  const config = normalizeConfig(publish === undefined ? {} : { delivery: { publish } })
  return { webhook: new RebuildWebhook({ config, stateDir, log, ...(extra.timeoutMs !== undefined ? { timeoutMs: extra.timeoutMs } : {}) }), stateDir, logs }
}

async function exists (file: string): Promise<boolean> {
  return await access(file).then(() => true, () => false)
}

t.test('not configured: nothing is sent', async t => {
  const { webhook } = hook(t, undefined)
  t.same(await webhook.send({ event: 'publish', published }), { rebuild: { triggered: false, ok: false } })
  t.same(await webhook.retry(), { rebuild: { triggered: false, ok: false }, retryAvailable: false })
  t.equal(await webhook.hasReceipt(), false)
})

t.test('POST with a signature the receiver can verify', async t => {
  const receiver = await startReceiver(t)
  const secret = 's3cret-value'
  const { webhook, stateDir, logs } = hook(t, { webhookUrl: receiver.url, secret, deploymentId: 'dep-1' })
  t.same(await webhook.send({ event: 'publish', commit, published }), { rebuild: { triggered: true, ok: true } })
  t.equal(receiver.requests.length, 1)
  const req = receiver.requests[0]!
  t.equal(req.method, 'POST')
  t.equal(req.headers['content-type'], 'application/json')
  t.same(JSON.parse(req.body.toString('utf8')), { event: 'publish', commit, published, deploymentId: 'dep-1' })
  const expected = 'sha256=' + createHmac('sha256', secret).update(req.body).digest('hex')
  t.equal(req.headers['x-cms-signature'], expected, 'HMAC of the exact body bytes')
  const wrong = 'sha256=' + createHmac('sha256', 'other').update(req.body).digest('hex')
  t.not(req.headers['x-cms-signature'], wrong, 'another secret does not verify')
  t.equal(await exists(path.join(stateDir, 'rebuild-receipt.json')), false, 'no receipt on success')
  t.notOk(logs.join('').includes(secret), 'the secret is never logged')
})

t.test('PUT per config, no signature header without a secret, no commit when none given', async t => {
  const receiver = await startReceiver(t)
  const { webhook } = hook(t, { webhookUrl: receiver.url, method: 'PUT' })
  t.same(await webhook.send({ event: 'publish', published }), { rebuild: { triggered: true, ok: true } })
  const req = receiver.requests[0]!
  t.equal(req.method, 'PUT')
  t.equal(req.headers['x-cms-signature'], undefined)
  t.same(JSON.parse(req.body.toString('utf8')), { event: 'publish', published })
})

t.test('a 500 keeps a receipt; retry() resends the same body and clears it', async t => {
  const receiver = await startReceiver(t)
  const secret = 'k'
  const { webhook, stateDir, logs } = hook(t, { webhookUrl: receiver.url, secret })
  receiver.reply = { status: 500 }
  t.same(await webhook.send({ event: 'publish', commit, published }), { rebuild: { triggered: true, ok: false }, retryAvailable: true })
  const receiptFile = path.join(stateDir, 'rebuild-receipt.json')
  t.ok(await exists(receiptFile), 'receipt written')
  t.equal(await webhook.hasReceipt(), true)
  t.notOk((await readFile(receiptFile, 'utf8')).includes('"k"'), 'the receipt does not hold the secret')
  t.notOk(logs.join('').includes('"k"'))
  // still failing: the receipt stays
  t.same(await webhook.retry(), { rebuild: { triggered: true, ok: false }, retryAvailable: true })
  receiver.reply = { status: 204 }
  t.same(await webhook.retry(), { rebuild: { triggered: true, ok: true } })
  t.equal(receiver.requests.length, 3)
  t.same(receiver.requests[2]!.body, receiver.requests[0]!.body, 'byte-identical body')
  t.equal(receiver.requests[2]!.headers['x-cms-signature'], 'sha256=' + createHmac('sha256', secret).update(receiver.requests[0]!.body).digest('hex'))
  t.equal(await exists(receiptFile), false, 'receipt removed after a successful retry')
  t.equal(await webhook.hasReceipt(), false)
  t.same(await webhook.retry(), { rebuild: { triggered: false, ok: false }, retryAvailable: false }, 'nothing left to retry')
  t.equal(receiver.requests.length, 3)
})

t.test('a slow receiver times out; a refused connection fails the same way', async t => {
  const receiver = await startReceiver(t)
  receiver.reply = { status: 200, delayMs: 2000 }
  const { webhook, stateDir } = hook(t, { webhookUrl: receiver.url }, { timeoutMs: 100 })
  const started = Date.now()
  t.same(await webhook.send({ event: 'publish', published }), { rebuild: { triggered: true, ok: false }, retryAvailable: true })
  t.ok(Date.now() - started < 1500, 'gave up at the timeout')
  t.ok(await exists(path.join(stateDir, 'rebuild-receipt.json')))

  const refused = hook(t, { webhookUrl: 'http://127.0.0.1:1/hook' })
  t.same(await refused.webhook.send({ event: 'publish', published }), { rebuild: { triggered: true, ok: false }, retryAvailable: true })
  t.equal(await refused.webhook.hasReceipt(), true)
})

t.test('a receipt that cannot be written is reported', async t => {
  const dir = t.testdir({ blocker: 'a file where the state directory should be' })
  const { webhook } = hook(t, { webhookUrl: 'http://127.0.0.1:1/hook' }, { stateDir: path.join(dir, 'blocker', 'cms') })
  const outcome = await webhook.send({ event: 'publish', published })
  t.same(outcome.rebuild, { triggered: true, ok: false })
  t.equal(outcome.retryAvailable, false)
  t.type(outcome.receiptError, 'string')
})

t.test('a corrupt receipt is not retried', async t => {
  const receiver = await startReceiver(t)
  const { webhook, stateDir } = hook(t, { webhookUrl: receiver.url })
  await writeFile(path.join(stateDir, 'rebuild-receipt.json'), '{not json')
  t.equal(await webhook.hasReceipt(), false)
  t.same(await webhook.retry(), { rebuild: { triggered: false, ok: false }, retryAvailable: false })
  t.equal(receiver.requests.length, 0)
})
