/**
 * `git-cms demo`'s example site as Koa middleware: `/`, `/posts/<id>` and `/pages/<id>` rendered
 * from the working tree on every request, so a publish shows at once; `/markdown-it/posts/<id>`
 * renders a body as Hugo or Jekyll would, without source hints.
 */
import type { Middleware } from 'koa'
import type { Services } from '../services.js'
import { NotFoundError } from '../errors.js'
import { ENTRY_ID } from '../storage/names.js'
import { renderHome, renderNotFound, renderPage, renderPost, type SiteChrome, type SiteEntry } from './pages.js'
import type { MarkdownRenderer } from './markdown-it-body.js'

/** The collections the example site reads (those of fixtures-repo/cms.config.yaml). */
const POSTS = 'posts'
const PAGES = 'pages'
const AUTHORS = 'authors'
const SETTINGS = 'settings'
const SNIPPETS = 'snippets'

type Route = { kind: 'home' } | { kind: 'post' | 'page' | 'foreign-post', id: string }

/** Shown above a body rendered by markdown-it. */
const FOREIGN_NOTE = '<p class="meta">This body was rendered by markdown-it, as a Hugo or Jekyll site renders it: its container carries only the <code>data-cms-md</code> attribute, and the page includes <code>bootstrap.js</code>.</p>'

/** The example site's pages as a middleware; anything it does not serve goes to `next`. */
export function demoSite (services: Services): Middleware {
  // Both Markdown renderers load on the first post shown: some 400 modules the demo's start need not wait for.
  let markdownIt: MarkdownRenderer | null = null
  return async (ctx, next) => {
    const route = ctx.method === 'GET' || ctx.method === 'HEAD' ? routeOf(ctx.path) : null
    if (route === null) { await next(); return }
    const site = new SiteContent(services)
    const chrome = await site.chrome()
    let html: string | null = null
    if (route.kind === 'home') {
      const posts = (await site.entries(POSTS)).filter(p => p.data.draft !== true).sort(newestFirst)
      html = renderHome(chrome, posts, await site.entries(PAGES), new Map((await site.entries(AUTHORS)).map(a => [a.id, a])))
    } else if (route.kind === 'post' || route.kind === 'foreign-post') {
      const post = await site.entry(POSTS, route.id)
      if (post !== null) {
        const body = typeof post.data.body === 'string' ? post.data.body : ''
        const authorId = post.data.author
        const author = typeof authorId === 'string' ? await site.entry(AUTHORS, authorId) : null
        if (route.kind === 'post') {
          const { renderMarkdown } = await import('../content/markdown/index.js')
          html = renderPost(chrome, post, renderMarkdown(body, { collection: POSTS, id: post.id }), author)
        } else {
          const { createMarkdownIt, markdownItBody } = await import('./markdown-it-body.js')
          markdownIt ??= createMarkdownIt()
          html = renderPost(chrome, post, FOREIGN_NOTE + markdownItBody(markdownIt, POSTS, post.id, body), author)
        }
      }
    } else {
      const page = await site.entry(PAGES, route.id)
      if (page !== null) html = renderPage(chrome, page, await site.layoutField(PAGES))
    }
    ctx.set('Cache-Control', 'no-cache')
    ctx.type = 'text/html; charset=utf-8'
    ctx.status = html === null ? 404 : 200
    ctx.body = html ?? renderNotFound(chrome)
  }
}

function routeOf (urlPath: string): Route | null {
  if (urlPath === '/' || urlPath === '/index.html') return { kind: 'home' }
  const foreign = /^\/markdown-it\/posts\/([^/]+)\/?$/.exec(urlPath)
  if (foreign !== null) return { kind: 'foreign-post', id: foreign[1]! }
  const m = /^\/(posts|pages)\/([^/]+)\/?$/.exec(urlPath)
  if (m === null) return null
  return { kind: m[1] === POSTS ? 'post' : 'page', id: m[2]! }
}

function newestFirst (a: SiteEntry, b: SiteEntry): number {
  const da = typeof a.data.date === 'string' ? a.data.date : ''
  const db = typeof b.data.date === 'string' ? b.data.date : ''
  return da < db ? 1 : da > db ? -1 : 0
}

/** Reads entries for one request; unreadable entries and missing collections are left out. */
class SiteContent {
  readonly #services: Services

  constructor (services: Services) {
    this.#services = services
  }

  async chrome (): Promise<SiteChrome> {
    const singleton = (await this.#services.content.registry.get(SETTINGS))?.metadata.singletonId ?? 'site'
    return { settings: await this.entry(SETTINGS, singleton), footer: await this.entry(SNIPPETS, 'footer') }
  }

  async layoutField (collection: string): Promise<string> {
    return (await this.#services.content.registry.get(collection))?.layoutField ?? 'sections'
  }

  async entries (collection: string): Promise<SiteEntry[]> {
    const index = await this.#index(collection)
    if (index === null) return []
    const list: SiteEntry[] = []
    for (const e of await index.freshen(await index.all())) if (e.data !== undefined) list.push({ collection, id: e.id, data: e.data })
    return list
  }

  async entry (collection: string, id: string): Promise<SiteEntry | null> {
    if (!ENTRY_ID.test(id)) return null
    const index = await this.#index(collection)
    const e = index === null ? null : await index.get(id)
    return e?.data === undefined ? null : { collection, id, data: e.data }
  }

  async #index (collection: string): Promise<Awaited<ReturnType<Services['content']['index']>> | null> {
    try {
      return await this.#services.content.index(collection)
    } catch (err) {
      if (err instanceof NotFoundError) return null
      throw err
    }
  }
}
