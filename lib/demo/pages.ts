/**
 * The demo site's pages as HTML strings: every value from content goes through `escapeHtml`, links
 * through `safeHref`, and each editable value carries `data-cms="<collection>/<id>#<field.path>"`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isPlainObject } from '../content/data-diff.js'
import { isAllowedHref } from '../url-scheme.js'

/** One entry as the pages use it. */
export interface SiteEntry {
  collection: string
  id: string
  data: Record<string, unknown>
}

/** What every page needs besides its own content. */
export interface SiteChrome {
  /** The settings singleton, or null when it is missing or unreadable. */
  settings: SiteEntry | null
  /** The `snippets/footer` entry, or null. */
  footer: SiteEntry | null
}

const DEFAULT_TITLE = 'Example site'

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes a value for HTML text or a double- or single-quoted attribute. */
export function escapeHtml (value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value)
  return text.replace(/[&<>"']/g, c => ENTITIES[c] ?? c)
}

/** A link target safe for `href` (relative, http(s) or mailto); anything else (`javascript:` ...) becomes `#`. */
export function safeHref (value: unknown): string {
  if (typeof value !== 'string') return '#'
  const trimmed = value.trim()
  return isAllowedHref(trimmed) ? escapeHtml(trimmed) : '#'
}

/** The string value of a field, or a fallback when it is missing or not a string. */
function textOf (data: Record<string, unknown> | undefined, key: string, fallback = ''): string {
  const value = data !== undefined && Object.hasOwn(data, key) ? data[key] : undefined
  return typeof value === 'string' ? value : fallback
}

/** The stylesheet every page inlines: `site.css` beside this file, or its build (`dist/lib/demo/` -> `dist/browser/`). */
const SITE_CSS = (() => {
  const file = ['./site.css', '../../browser/demo-site.css'].map(rel => fileURLToPath(new URL(rel, import.meta.url))).find(f => existsSync(f))
  if (file === undefined) throw new Error('the demo site\'s stylesheet is missing (run npm run build)')
  return readFileSync(file, 'utf8')
})()

/** The `data-cms` attribute binding an element to a field. */
export function bind (entry: SiteEntry, field: string): string {
  return ` data-cms="${escapeHtml(`${entry.collection}/${entry.id}#${field}`)}"`
}

/** A whole HTML document around a page's main content. */
function renderLayout (chrome: SiteChrome, title: string, main: string): string {
  const s = chrome.settings
  const siteTitle = textOf(s?.data, 'title', DEFAULT_TITLE)
  const tagline = textOf(s?.data, 'tagline')
  const nav = Array.isArray(s?.data.nav) ? s.data.nav : []
  const navItems = s === null
    ? ''
    : nav.map((item: unknown, i) => {
      const link = isPlainObject(item) ? item : {}
      return `<li><a href="${safeHref(link.href)}"${bind(s, `nav.${i}.label`)}>${escapeHtml(textOf(link, 'label'))}</a></li>`
    }).join('')
  const docTitle = title === '' ? siteTitle : `${title} · ${siteTitle}`
  const footer = chrome.footer
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(docTitle)}</title>
<style>${SITE_CSS}</style>
<script src="/__cms/bootstrap.js" defer></script>
</head>
<body>
<header class="site-header"><div class="wrap">
<a class="brand" href="/"${s === null ? '' : bind(s, 'title')}>${escapeHtml(siteTitle)}</a>
${tagline === '' || s === null ? '' : `<p class="tagline"${bind(s, 'tagline')}>${escapeHtml(tagline)}</p>`}
${navItems === '' ? '' : `<nav class="site-nav" aria-label="Main"><ul>${navItems}</ul></nav>`}
</div></header>
<main class="wrap">
${main}
</main>
<footer class="site-footer"><div class="wrap">
${footer === null ? `<p>${escapeHtml(siteTitle)}</p>` : `<p${bind(footer, 'text')}>${escapeHtml(textOf(footer.data, 'text'))}</p>`}
<p><a href="/admin">Sign in to edit</a></p>
</div></footer>
</body>
</html>
`
}

/** The home page: the published posts, newest first, and the pages. */
export function renderHome (chrome: SiteChrome, posts: SiteEntry[], pages: SiteEntry[], authors: Map<string, SiteEntry>): string {
  const items = posts.map(post => `<li>
<p class="meta">${postMeta(post, authors.get(textOf(post.data, 'author')) ?? null)}</p>
<h2><a href="/posts/${encodeURIComponent(post.id)}"${bind(post, 'title')}>${escapeHtml(titleOf(post))}</a></h2>
${tagList(post)}
</li>`).join('\n')
  const pageItems = pages.map(page => `<li><a href="/pages/${encodeURIComponent(page.id)}">${escapeHtml(titleOf(page))}</a></li>`).join('')
  const main = `<h1 class="section-title">Latest posts</h1>
${posts.length === 0 ? '<p>Nothing published yet.</p>' : `<ul class="post-list">\n${items}\n</ul>`}
${pages.length === 0 ? '' : `<h2 class="section-title">Pages</h2>\n<ul class="page-list">${pageItems}</ul>`}`
  return renderLayout(chrome, '', main)
}

/** A post: title, meta line, cover image, the rendered body and the author's box. */
export function renderPost (chrome: SiteChrome, post: SiteEntry, bodyHtml: string, author: SiteEntry | null): string {
  const cover = textOf(post.data, 'cover')
  const main = `<article>
<header>
<p class="meta">${postMeta(post, author)}${post.data.draft === true ? ' <span class="badge">Draft: not listed on the home page</span>' : ''}</p>
<h1${bind(post, 'title')}>${escapeHtml(titleOf(post))}</h1>
${tagList(post)}
</header>
${cover === '' ? '' : `<figure class="cover"><img src="${safeHref(cover)}" alt="${escapeHtml(textOf(post.data, 'coverAlt'))}" width="480" height="240"></figure>`}
<div class="post-body">
${bodyHtml}
</div>
${author === null ? '' : authorBox(author)}
</article>`
  return renderLayout(chrome, titleOf(post), main)
}

/** A page built from sections (hero, text, cta). */
export function renderPage (chrome: SiteChrome, page: SiteEntry, layoutField: string): string {
  const raw = page.data[layoutField]
  const sections = Array.isArray(raw) ? raw : []
  const hasHero = sections.some(s => isPlainObject(s) && s.type === 'hero')
  const parts = sections.map((section: unknown, i) => isPlainObject(section) ? renderSection(page, `${layoutField}.${i}`, section) : '')
  const main = `<article class="page">
${hasHero ? '' : `<h1${bind(page, 'title')}>${escapeHtml(titleOf(page))}</h1>`}
${parts.join('\n')}
</article>`
  return renderLayout(chrome, titleOf(page), main)
}

/** The not-found page. */
export function renderNotFound (chrome: SiteChrome): string {
  return renderLayout(chrome, 'Not found', '<h1>Page not found</h1>\n<p>There is nothing at this address. <a href="/">Back to the home page</a>.</p>')
}

function renderSection (page: SiteEntry, at: string, section: Record<string, unknown>): string {
  const heading = textOf(section, 'heading')
  const text = textOf(section, 'text')
  const h = (tag: string): string => heading === '' ? '' : `<${tag}${bind(page, `${at}.heading`)}>${escapeHtml(heading)}</${tag}>`
  const p = text === '' ? '' : `<p${bind(page, `${at}.text`)}>${escapeHtml(text)}</p>`
  switch (section.type) {
    case 'hero':
      return `<section class="hero">${h('h1')}${p}</section>`
    case 'cta': {
      const label = textOf(section, 'linkLabel', 'Learn more')
      const link = textOf(section, 'link')
      const button = link === '' ? '' : `<p><a class="button" href="${safeHref(link)}"${bind(page, `${at}.linkLabel`)}>${escapeHtml(label)}</a></p>`
      return `<section class="cta">${h('h2')}${p}${button}</section>`
    }
    default:
      return `<section class="text">${h('h2')}${p}</section>`
  }
}

function postMeta (post: SiteEntry, author: SiteEntry | null): string {
  const date = textOf(post.data, 'date')
  const parts: string[] = []
  if (date !== '') parts.push(`<time datetime="${escapeHtml(date)}">${escapeHtml(formatDate(date))}</time>`)
  if (author !== null) parts.push(`by ${escapeHtml(textOf(author.data, 'name', author.id))}`)
  return parts.join(' · ')
}

function tagList (post: SiteEntry): string {
  const tags = Array.isArray(post.data.tags) ? post.data.tags.filter((t): t is string => typeof t === 'string') : []
  return tags.length === 0 ? '' : `<ul class="tags" aria-label="Tags">${tags.map(t => `<li>${escapeHtml(t)}</li>`).join('')}</ul>`
}

function authorBox (author: SiteEntry): string {
  const avatar = textOf(author.data, 'avatar')
  const links = Array.isArray(author.data.links) ? author.data.links.filter(isPlainObject) : []
  return `<aside class="author-box" aria-label="About the author">
${avatar === '' ? '' : `<img src="${safeHref(avatar)}" alt="" width="64" height="64">`}
<div>
<strong${bind(author, 'name')}>${escapeHtml(textOf(author.data, 'name', author.id))}</strong>
${textOf(author.data, 'bio') === '' ? '' : `<p${bind(author, 'bio')}>${escapeHtml(textOf(author.data, 'bio'))}</p>`}
${links.length === 0 ? '' : `<ul>${links.map(l => `<li><a href="${safeHref(l.url)}">${escapeHtml(textOf(l, 'label'))}</a></li>`).join('')}</ul>`}
</div>
</aside>`
}

function titleOf (entry: SiteEntry): string {
  return textOf(entry.data, 'title', textOf(entry.data, 'name', entry.id))
}

function formatDate (date: string): string {
  const parsed = new Date(`${date}T00:00:00Z`)
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(parsed.getTime())) return date
  return new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(parsed)
}
