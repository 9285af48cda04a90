/**
 * `preview.stylesheets` (CONTRACT 16): paths on the site are accepted and reach the Studio's shell;
 * anything that could name another host, climb out of a path or break out of an attribute is a
 * ConfigError at load, naming the key, and the service does not start.
 */
import t from 'tap'
import { normalizeConfig, loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import { makeSite, startServer } from '../helpers/site.js'

t.test('paths on the site are accepted, kept in order and reach the Studio', async t => {
  t.same(normalizeConfig({}).preview.stylesheets, [], 'none by default')
  const list = ['/css/site.css', '/assets/main.min.3f2a.css?v=2&x=1', '/_astro/index~x+y.css']
  t.same(normalizeConfig({ preview: { stylesheets: list } }).preview.stylesheets, list)
  t.ok(Object.isFrozen(normalizeConfig({ preview: { stylesheets: list } }).preview.stylesheets), 'frozen')
  const s = await startServer(t, { config: { preview: { stylesheets: ['/css/site.css'] } } })
  const page = await (await s.request('/admin/cms', { headers: { cookie: await s.login() } })).text()
  t.match(page, /"previewStylesheets":\["\/css\/site\.css"\]/, 'the shell carries the stylesheets')
})

t.test('a hostile or malformed stylesheet is refused at config load, naming the key', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [['https://evil.example/x.css'], /preview\.stylesheets\.0: .*single \//],
    [['//evil.example/x.css'], /preview\.stylesheets\.0: .*no other host/],
    [['javascript:alert(1)'], /preview\.stylesheets\.0/],
    [['css/site.css'], /preview\.stylesheets\.0: .*starting with a single \//],
    [['/ok.css', '/css/../../etc/passwd'], /preview\.stylesheets\.1: .*\.\. segments/],
    [['/css/%2e%2e/x.css'], /preview\.stylesheets\.0: .*may hold only/],
    [['/x.css"><script>alert(1)</script>'], /may hold only/],
    [['/x.css\\..\\y'], /may hold only/],
    [['/x .css'], /may hold only/],
    [['/x.css\n'], /may hold only/],
    [['/'], /empty/],
    [['/api/cms/entries'], /git-cms's own \/api\/cms/],
    [['/admin/assets/studio.css'], /git-cms's own \/admin/],
    [['/__cms/editor.css'], /git-cms's own \/__cms/],
    [[''], /preview\.stylesheets\.0/],
    [[5], /preview\.stylesheets\.0/],
    ['/css/site.css', /preview\.stylesheets/],
    [['/a.css', '/a.css'], /preview\.stylesheets/],
    [Array.from({ length: 21 }, (_, i) => `/c${i}.css`), /preview\.stylesheets/],
    [['/' + 'a'.repeat(1024)], /preview\.stylesheets\.0/]
  ]
  for (const [value, message] of cases) {
    let error: unknown
    try { normalizeConfig({ preview: { stylesheets: value } }) } catch (err) { error = err }
    t.ok(error instanceof ConfigError, JSON.stringify(value))
    t.match((error as Error).message, message, JSON.stringify(value))
  }
  // An own prefix moved by the config is still the CMS's; the default one is then the site's.
  t.throws(() => normalizeConfig({ mountPath: '/studio', preview: { stylesheets: ['/studio/x.css'] } }), /git-cms's own \/studio/)
  t.same(normalizeConfig({ mountPath: '/studio', preview: { stylesheets: ['/admin/x.css'] } }).preview.stylesheets, ['/admin/x.css'])
  t.throws(() => normalizeConfig({ preview: { stylesheet: ['/x.css'] } }), /preview\.stylesheet: is not a known key/)
  t.throws(() => normalizeConfig({ preview: [] }), /preview/)
})

t.test('the service does not start on a config file with a hostile stylesheet', async t => {
  const dir = await makeSite(t, { 'cms.config.yaml': 'preview:\n  stylesheets: ["//evil.example/x.css"]\n' })
  await t.rejects(loadConfig(dir), { name: 'ConfigError', message: /preview\.stylesheets\.0/ })
})
