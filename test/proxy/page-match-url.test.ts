/**
 * A collection's `url` pattern: the address it gives each entry (Hugo, Jekyll and Eleventy shaped
 * ids), how request paths compare, and the config's check of the key.
 */
import t from 'tap'
import { entryUrl, mayMatchUrl, normalizeUrlPath } from '../../lib/http/page-match-url.js'
import { normalizeConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'

t.test('entryUrl fills the placeholders', async t => {
  t.equal(entryUrl('/posts/{slug}/', 'tide-tables'), '/posts/tide-tables/')
  t.equal(entryUrl('/posts/{slug}/', 'getting-started'), '/posts/getting-started/', 'a page bundle\'s id is its folder')
  t.equal(entryUrl('/posts/{slug}/', '_index'), '/posts/', 'a section page is its folder\'s address')
  t.equal(entryUrl('/docs/{id}/', 'guides/_index'), '/docs/guides/')
  t.equal(entryUrl('/docs/{id}/', 'guides/knots'), '/docs/guides/knots/')
  t.equal(entryUrl('/posts/{slug}/', 'tide-tables', { slug: 'tides' }), '/posts/tides/', 'the slug field wins')
  t.equal(entryUrl('/{year}/{month}/{day}/{slug}.html', '2022-05-01-so-it-begins'), '/2022/05/01/so-it-begins.html', 'a Jekyll post')
  t.equal(entryUrl('/{year}/{slug}/', 'launch', { date: '2024-03-09T10:00:00Z' }), '/2024/launch/', 'the date field')
  t.equal(entryUrl('/{year}/{slug}/', 'launch', { date: new Date('2023-07-01T00:00:00Z') }), '/2023/launch/', 'a YAML date')
  t.equal(entryUrl('/{year}/{slug}/', 'launch'), null, 'no date: no address')
  t.equal(entryUrl('/posts/{slug}/', 'with space'), '/posts/with%20space/', 'encoded as a browser sends it')
})

t.test('addresses compare without case, trailing slash or index.html', async t => {
  t.equal(normalizeUrlPath('/Posts/Tide-Tables/index.html'), '/posts/tide-tables')
  t.equal(normalizeUrlPath('/posts/with%20space/'), '/posts/with space')
  t.equal(normalizeUrlPath('/'), '/')
  t.equal(normalizeUrlPath('/%E0%A4%A'), '/%e0%a4%a', 'bad encoding is compared as sent')
  t.ok(mayMatchUrl('/posts/{slug}/', '/posts/tide-tables/'))
  t.ok(mayMatchUrl('/posts/{slug}/', '/posts/'))
  t.notOk(mayMatchUrl('/posts/{slug}/', '/about/'))
  t.ok(mayMatchUrl('/{year}/{month}/{slug}.html', '/2022/05/x.html'))
})

t.test('the config checks the url key', async t => {
  const withUrl = (url: unknown): unknown => ({ collections: { posts: { format: 'md', url } } })
  t.equal(normalizeConfig(withUrl('/posts/{slug}/')).collections.posts?.url, '/posts/{slug}/')
  for (const bad of ['posts/{slug}/', '/posts/{title}/', '/posts/{slug', '/posts/ {slug}/', '/p?x={id}', 42, '/' + 'x'.repeat(1024)]) {
    t.throws(() => normalizeConfig(withUrl(bad)), ConfigError, JSON.stringify(bad).slice(0, 40))
    try { normalizeConfig(withUrl(bad)) } catch (err) { t.match((err as Error).message, 'collections.posts.url') }
  }
})
