import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import path from 'node:path'
import { rm, symlink } from 'node:fs/promises'
import { Ajv, type ValidateFunction } from 'ajv'
import { configSchema } from '../../lib/config-schema.js'
import { CONFIG_AJV_OPTIONS } from '../../lib/config-schema.js'
import { validateConfigSchema as generated } from '../../lib/config-shape.generated.js'

const validateConfigSchema = generated as ValidateFunction
import { configShapeCheck, existingConfigFiles, loadConfig, normalizeConfig } from '../../lib/config.js'
import { generatedOrCompiled } from '../../lib/content/generated-validators.js'
import { ConfigError } from '../../lib/errors.js'
import { ROOT } from '../helpers/repo-root.js'

const root = ROOT

t.test('lib/config-shape.generated.ts is what the generator makes from the current schema', async t => {
  // Fails when config-schema.ts (or the options) changed without regenerating: then the service
  // would compile at run time (correct, but the start pays for it again).
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(root, 'scripts', 'generate-config-validator.mjs'), '--check'], { cwd: root })
    .catch((err: { stdout: string, stderr: string }) => ({ stdout: err.stdout, stderr: `FAILED ${err.stderr}` }))
  t.notMatch(stderr, /FAILED|out of date/, 'run node scripts/generate-config-validator.mjs')
  t.equal(stdout, '')
  t.equal(configShapeCheck(), validateConfigSchema, 'the digest matches: the generated validator is the one used')
})

// Good and bad configs: the generated validator answers exactly as a run-time compile.
const cases: unknown[] = [
  {},
  { apiBasePath: '/api/x', mountPath: '/admin', enableAdmin: false, contentDir: 'site/content', uploads: { maxBytes: 5, types: ['png', 'pdf'] } },
  { collections: { posts: { format: 'md', folder: 'content/posts', schema: { type: 'object' }, singletonId: null, listFields: ['title'] } } },
  { delivery: { publish: { webhookUrl: 'https://example.test/hook', method: 'PUT' }, status: { url: 'http://x.test' } } },
  { git: { remote: 'origin', branch: 'main', pullInterval: 0, syncSecret: 'x'.repeat(16) }, permissions: { editor: ['edit', 'publish'] } },
  { apiBasePath: 3 },
  { apiBasePath: 'no-slash' },
  { unknownKey: true },
  { enableAdmin: 'yes' },
  { contentDir: '' },
  { contentDir: '../outside' },
  { contentDir: '/abs' },
  { uploads: { maxBytes: 0 } },
  { uploads: { maxBytes: 1.5 } },
  { uploads: { types: ['png', 'png'] } },
  { uploads: { types: ['exe'] } },
  { uploads: { extra: 1 } },
  { collections: { Posts: { format: 'md' } } },
  { collections: { posts: { format: 'docx' } } },
  { collections: { posts: { folder: '' } } },
  { collections: { posts: { files: [] } } },
  { collections: { posts: { files: Array.from({ length: 1001 }, (_, i) => `f${i}`) } } },
  { collections: { posts: { nope: 1 } } },
  { collections: { posts: 'md' } },
  { collections: { posts: { singletonId: '../x' } } },
  { collections: { posts: { listFields: ['a', 'a'] } } },
  { collections: { 'a/b': { format: 'md' } } },
  JSON.parse('{"__proto__": {"x": 1}}'),
  JSON.parse('{"collections": {"__proto__": {"format": "md"}}}'),
  { delivery: { publish: {} } },
  { delivery: { publish: { webhookUrl: 'ftp://x' } } },
  { delivery: { publish: { webhookUrl: 'https://x', method: 'GET' } } },
  { delivery: { status: { target: 'x' } } },
  { delivery: { other: {} } },
  { auth: 'header' },
  { git: { remote: '-x' } },
  { git: { branch: 'a..b' } },
  { git: { branch: 'x/' } },
  { git: { pullInterval: 86401 } },
  { git: { pullInterval: -1 } },
  { git: { syncSecret: 'short' } },
  { permissions: { editor: 'edit' } },
  { permissions: { editor: ['fly'] } },
  [],
  'config',
  null
]

t.test('the generated validator gives the same answer and errors as ajv compiling the schema now', async t => {
  const compiled = new Ajv({ ...CONFIG_AJV_OPTIONS, code: { ...CONFIG_AJV_OPTIONS.code } }).compile(configSchema)
  for (const input of cases) {
    const label = JSON.stringify(input)?.slice(0, 80) ?? String(input)
    const expected = compiled(input)
    t.equal(validateConfigSchema(input), expected, label)
    t.same(validateConfigSchema.errors ?? null, compiled.errors ?? null, `${label}: errors`)
  }
  t.ok(cases.filter(c => !compiled(c)).length >= 35, 'most cases are refused')
})

t.test('a generated validator made from another schema or ajv is not used: the schema is compiled now', async t => {
  const fallback = generatedOrCompiled('0'.repeat(64), validateConfigSchema, configSchema, CONFIG_AJV_OPTIONS, ajv => ajv.compile(configSchema) as ValidateFunction)
  t.not(fallback, validateConfigSchema, 'compiled at run time')
  const compiled = new Ajv({ ...CONFIG_AJV_OPTIONS, code: { ...CONFIG_AJV_OPTIONS.code } }).compile(configSchema)
  for (const input of cases) {
    t.equal(fallback(input), compiled(input))
    t.same(fallback.errors ?? null, compiled.errors ?? null)
  }
})

t.test('normalizeConfig refuses a bad shape with the key and reason, as before', async t => {
  const refused: Array<[unknown, string]> = [
    [{ apiBasePath: 3 }, 'Invalid config: apiBasePath: must be string'],
    [{ unknownKey: true }, 'Invalid config: unknownKey: is not a known key'],
    [{ collections: { posts: { format: 'docx' } } }, 'Invalid config: collections.posts.format: must be one of "json", "yaml", "md", "mdx", "toml"'],
    [{ delivery: { publish: {} } }, 'Invalid config: delivery.publish.webhookUrl: is required'],
    [{ git: { syncSecret: 'short' } }, 'Invalid config: git.syncSecret: must NOT have fewer than 16 characters'],
    [{ collections: { ok: { folder: 'a' }, Posts: { format: 'docx' } } }, 'Invalid config: collections.Posts: a collection name must match ^[a-z0-9][a-z0-9_-]{0,63}$ (use folder: Posts to read that folder)'],
    [{ collections: { posts: { format: 'md', i18n: { locales: ['en'], layout: 'dirs', folders: { 'a/b': 'x' } } } } }, 'Invalid config: collections.posts.i18n.folders: must match pattern "^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8}){0,3}$"'],
    [{ contentDir: '../outside' }, 'Invalid config: contentDir: must match pattern "^(?!/)(?!.*(^|/)\\.\\.(/|$))[A-Za-z0-9/_.-]+$"']
  ]
  for (const [input, message] of refused) {
    t.throws(() => normalizeConfig(input), new ConfigError('x', 'y').constructor, message)
    try { normalizeConfig(input) } catch (err) { t.equal((err as Error).message, message) }
  }
  t.equal(normalizeConfig({ collections: { posts: { format: 'md' } } }).collections.posts?.format, 'md')
})

t.test('a dangling cms.config.* link is a config that cannot be read, never "no config" (as init sees it)', async t => {
  const dir = t.testdir({ 'cms.config.json': '{}' })
  await symlink(path.join(dir, 'nowhere.yaml'), path.join(dir, 'cms.config.yaml'))
  t.same(await existingConfigFiles(dir), ['cms.config.yaml', 'cms.config.json'])
  await t.rejects(loadConfig(dir), /only one config file may exist, found cms\.config\.yaml, cms\.config\.json/)
  await rm(path.join(dir, 'cms.config.json'))
  await t.rejects(loadConfig(dir), { name: 'ConfigError', message: /cms\.config\.yaml: cannot be read/ })
})
