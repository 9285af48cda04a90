import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import * as api from '../lib/index.js'
import { makeSite, TEST_PASSWORD, TEST_SECRET } from './helpers/site.js'
import { fromRoot } from './helpers/repo-root.js'

const LIB = fromRoot('lib/')

t.test('lib/index.ts exports exactly the public surface (no internals such as openCms)', async t => {
  t.same(Object.keys(api).sort(), [
    'BadRequestError', 'CmsError', 'ConfigError', 'ConflictError', 'ForbiddenError', 'MediaInUseError',
    'MissingCsrfHeaderError', 'NotFoundError', 'PayloadTooLargeError', 'RateLimitedError', 'RevisionConflictError',
    'SchemaValidationError',
    'StaleSourceError', 'StartupError', 'StorageUnavailableError', 'UnauthorizedError', 'UnreadableEntryError',
    'UnsupportedMediaTypeError', 'createCms', 'loadConfig', 'parseSourceHint', 'rehypeCmsSource', 'remarkCmsSource',
    'renderMarkdown', 'sourceHash'
  ])
})

t.test('createCms returns app, middleware, close, config and ready; no services, no secrets', async t => {
  const repoDir = await makeSite(t)
  const webhookSecret = 'webhook-signing-secret-0123456789'
  const cms = await api.createCms({
    repoDir,
    config: { delivery: { publish: { webhookUrl: 'http://127.0.0.1:9/hook', secret: webhookSecret } } },
    env: { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'silent' }
  })
  t.teardown(async () => { await cms.close() })
  t.same(Object.keys(cms).sort(), ['app', 'close', 'config', 'middleware', 'ready'])
  t.type(cms.middleware(), 'function')
  t.equal(await cms.ready, undefined, 'ready resolves once the index warm-up has ended')
  // Nothing reachable from the object holds the session secret, the password or the webhook secret.
  const seen = new Set<unknown>()
  const found: string[] = []
  const walk = (value: unknown, where: string, depth: number): void => {
    if (depth > 8 || value === null || (typeof value !== 'object' && typeof value !== 'string') || seen.has(value)) return
    if (typeof value === 'string') {
      for (const secret of [TEST_SECRET, TEST_PASSWORD, webhookSecret]) if (value.includes(secret)) found.push(where)
      return
    }
    seen.add(value)
    for (const key of Object.getOwnPropertyNames(value)) {
      let inner: unknown
      try { inner = (value as Record<string, unknown>)[key] } catch { continue }
      walk(inner, `${where}.${key}`, depth + 1)
    }
  }
  walk({ config: cms.config }, 'cms', 0)
  walk(cms.app, 'cms.app', 0)
  t.same(found, [], 'no secret reachable')
  t.equal(cms.config.delivery.publish?.webhookUrl, 'http://127.0.0.1:9/hook', 'the rest of the config is there')
  t.ok(Object.isFrozen(cms.config))
})

t.test('no test switch in lib/: nothing reads TAP', async t => {
  const hits: string[] = []
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (/\.tsx?$/.test(entry.name) && /\benv\.TAP\b|\['TAP'\]/.test(await readFile(full, 'utf8'))) hits.push(full)
    }
  }
  await walk(LIB)
  t.same(hits, [])
})
