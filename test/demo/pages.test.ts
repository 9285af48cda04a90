import t from 'tap'
import { escapeHtml, safeHref, renderHome, renderPost, renderPage, renderNotFound, type SiteChrome, type SiteEntry } from '../../lib/demo/pages.js'

const settings: SiteEntry = { collection: 'settings', id: 'site', data: { title: 'Field <Notes>', tagline: 'A "quoted" & tagged line', nav: [{ label: 'About', href: '/pages/about' }, { label: 'Evil', href: 'javascript:alert(1)' }] } }
const chrome: SiteChrome = { settings, footer: null }
const evil = '<script>alert("x")</script> & \'friends\''

t.test('escapeHtml and safeHref', async t => {
  t.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
  t.equal(escapeHtml(null), '')
  t.equal(escapeHtml(3), '3')
  for (const ok of ['/pages/about', 'https://example.com/a?b=1&c=2', 'mailto:a@example.com', '#top', 'pages/x', '../up']) t.not(safeHref(ok), '#', ok)
  t.equal(safeHref('https://example.com/a?b=1&c=2'), 'https://example.com/a?b=1&amp;c=2')
  for (const bad of ['javascript:alert(1)', ' JavaScript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<b>', 'vbscript:x', '\\\\evil.example', 42]) t.equal(safeHref(bad), '#', String(bad))
})

t.test('a post escapes its title, tags and author, binds the title, and includes the bootstrap script', async t => {
  const post: SiteEntry = { collection: 'posts', id: 'p1', data: { title: evil, author: 'ann', date: '2026-01-05', tags: ['<b>tag</b>'], cover: 'javascript:alert(1)', coverAlt: '"><img src=x onerror=alert(1)>' } }
  const author: SiteEntry = { collection: 'authors', id: 'ann', data: { name: '<i>Ann</i>', bio: 'Writes <code>', links: [{ label: 'Site', url: 'javascript:x' }] } }
  const html = renderPost(chrome, post, '<div data-cms-md="posts/p1#body"><p>Body</p></div>', author)
  t.notMatch(html, '<script>alert', 'no raw script from content')
  t.match(html, '<h1 data-cms="posts/p1#title">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39;</h1>')
  t.match(html, '<title>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;friends&#39; · Field &lt;Notes&gt;</title>')
  t.match(html, '<li>&lt;b&gt;tag&lt;/b&gt;</li>')
  t.match(html, 'by &lt;i&gt;Ann&lt;/i&gt;')
  t.match(html, '<strong data-cms="authors/ann#name">&lt;i&gt;Ann&lt;/i&gt;</strong>')
  t.match(html, '<img src="#" alt="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"')
  t.notMatch(html, 'javascript:')
  t.match(html, '<div data-cms-md="posts/p1#body"><p>Body</p></div>', 'the rendered body is inserted as is')
  t.match(html, '<time datetime="2026-01-05">5 January 2026</time>')
  t.match(html, '<script src="/__cms/bootstrap.js" defer></script>')
  t.match(html, '<meta name="viewport" content="width=device-width, initial-scale=1">')
  t.match(html, 'data-cms="settings/site#title">Field &lt;Notes&gt;</a>')
  t.match(html, 'data-cms="settings/site#tagline">A &quot;quoted&quot; &amp; tagged line</p>')
  t.match(html, '<a href="#" data-cms="settings/site#nav.1.label">Evil</a>')
})

t.test('a page binds each section field by its index and escapes it', async t => {
  const page: SiteEntry = {
    collection: 'pages',
    id: 'home',
    data: {
      title: 'Home',
      sections: [
        { type: 'hero', heading: evil, text: 'Intro' },
        { type: 'text', heading: 'What', text: 'a < b' },
        'not an object',
        { type: 'cta', heading: 'Go', text: 'Now', link: 'mailto:hi@example.com', linkLabel: 'Write <us>' }
      ]
    }
  }
  const html = renderPage(chrome, page, 'sections')
  t.match(html, '<h1 data-cms="pages/home#sections.0.heading">&lt;script&gt;')
  t.match(html, '<p data-cms="pages/home#sections.0.text">Intro</p>')
  t.match(html, '<h2 data-cms="pages/home#sections.1.heading">What</h2><p data-cms="pages/home#sections.1.text">a &lt; b</p>')
  t.match(html, '<a class="button" href="mailto:hi@example.com" data-cms="pages/home#sections.3.linkLabel">Write &lt;us&gt;</a>')
  t.notMatch(html, 'data-cms="pages/home#title"', 'the hero is the heading')
  t.notMatch(html, '<script>alert')
  const plain = renderPage(chrome, { collection: 'pages', id: 'x', data: { title: '<T>', sections: 'broken' } }, 'sections')
  t.match(plain, '<h1 data-cms="pages/x#title">&lt;T&gt;</h1>', 'no hero: the title is the heading')
})

t.test('the home page lists posts with links and escaped titles; missing settings fall back', async t => {
  const posts: SiteEntry[] = [{ collection: 'posts', id: 'a-post', data: { title: evil, author: 'ann' } }]
  const pages: SiteEntry[] = [{ collection: 'pages', id: 'about', data: { title: 'About & more' } }]
  const html = renderHome({ settings: null, footer: { collection: 'snippets', id: 'footer', data: { text: '<b>Made</b>' } } }, posts, pages, new Map())
  t.match(html, '<a href="/posts/a-post" data-cms="posts/a-post#title">&lt;script&gt;')
  t.match(html, '<a href="/pages/about">About &amp; more</a>')
  t.match(html, '<p data-cms="snippets/footer#text">&lt;b&gt;Made&lt;/b&gt;</p>')
  t.match(html, '<title>Example site</title>')
  t.notMatch(html, 'data-cms="settings/')
  t.notMatch(html, '<script>alert')
  const empty = renderHome(chrome, [], [], new Map())
  t.match(empty, 'Nothing published yet.')
  t.match(renderNotFound(chrome), 'Page not found')
})
