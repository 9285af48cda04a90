import t from 'tap'
import { normalizeConfig, loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import { makeSite, startServer } from '../helpers/site.js'

const schema = { type: 'object', properties: { title: { type: 'string' }, date: { type: 'string' }, rank: { type: 'number' } } }
const withListFields = (listFields: unknown, extra: Record<string, unknown> = { schema }): unknown =>
  ({ collections: { posts: { format: 'md', ...extra, listFields } } })

t.test('listFields naming id, title or fields of the schema is accepted and reaches the Studio', async t => {
  const config = normalizeConfig(withListFields(['title', 'date', 'rank', 'id']))
  t.same(config.collections.posts?.listFields, ['title', 'date', 'rank', 'id'])
  // Without a schema in the config, the fields are only known from entries: accepted as written.
  t.same(normalizeConfig(withListFields(['anything'], {})).collections.posts?.listFields, ['anything'])
  const s = await startServer(t, { config: withListFields(['date', 'rank']) as never, files: { 'content/posts/a.md': '---\ntitle: A\n---\nx\n' } })
  const page = await (await s.request('/admin/cms/posts', { headers: { cookie: await s.login() } })).text()
  t.match(page, /"listFields":\["date","rank"\]/, 'the Studio config carries the columns')
})

t.test('a listFields entry outside the schema is a ConfigError naming the key and the field', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [['title', 'author'], /collections\.posts\.listFields\.1: "author" is not a field of the collection's schema \(known: id, title, date, rank\)/],
    [['__proto__'], /collections\.posts\.listFields\.0: "__proto__" is not a field name/],
    [['constructor'], /listFields\.0/],
    ['title', /listFields/],
    [[3], /listFields/],
    [[''], /listFields/],
    [['title', 'title'], /listFields/],
    [Array.from({ length: 13 }, (_, i) => `f${i}`), /listFields/]
  ]
  for (const [value, message] of cases) {
    let error: unknown
    try { normalizeConfig(withListFields(value)) } catch (err) { error = err }
    t.ok(error instanceof ConfigError, JSON.stringify(value))
    t.match((error as Error).message, message, JSON.stringify(value))
  }
})

t.test('the service refuses to start on a config file with an unknown list field', async t => {
  const dir = await makeSite(t, {
    'cms.config.yaml': 'collections:\n  posts:\n    format: md\n    schema:\n      type: object\n      properties:\n        title: { type: string }\n    listFields: [title, published]\n'
  })
  await t.rejects(loadConfig(dir), { name: 'ConfigError', message: /collections\.posts\.listFields\.1: "published"/ })
})
