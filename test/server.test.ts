import t from 'tap'
import { access } from 'node:fs/promises'
import { createServer } from 'node:net'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { createCms } from '../lib/cms.js'
import { startServer } from '../lib/server.js'
import { makeSite, TEST_SECRET } from './helpers/site.js'

t.test('serves the app, and close() lets a request in flight finish before releasing the instance', async t => {
  const repoDir = await makeSite(t)
  const cms = await createCms({ repoDir, env: { CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'silent' } })
  // A slow route of the test's own, standing in for a long publish.
  cms.app.use(async (ctx, next) => {
    if (ctx.path !== '/slow') { await next(); return }
    await delay(400)
    ctx.body = 'finished'
  })
  const running = await startServer({ cms, port: 0 })
  t.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const lockFile = path.join(repoDir, '.git/cms/instance.lock')
  await access(lockFile)
  const upload = await fetch(`${running.url}/uploads/2026/01/maria-b917fe43.png`)
  t.equal(upload.status, 200, 'the app answers')
  await upload.arrayBuffer()

  const inFlight = fetch(`${running.url}/slow`).then(async res => ({ status: res.status, text: await res.text() }))
  await delay(100)
  const closed = running.close()
  await delay(50)
  await t.rejects(fetch(`${running.url}/slow`), 'no new connections once closing')
  t.same(await inFlight, { status: 200, text: 'finished' }, 'the request in flight completes')
  await closed
  await t.rejects(access(lockFile), 'the instance lock is released after close')
  await running.close()
  t.pass('close is idempotent')
})

t.test('a port in use rejects', async t => {
  const blocker = createServer()
  await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { blocker.close() })
  const port = (blocker.address() as { port: number }).port
  const cms = await createCms({ repoDir: await makeSite(t), env: { CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'silent' } })
  t.teardown(async () => { await cms.close() })
  await t.rejects(startServer({ cms, port }), { code: 'EADDRINUSE' })
})
