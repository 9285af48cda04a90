/**
 * `git-cms demo`: a throwaway copy of `fixtures-repo/` and its site, rendered from the working tree on
 * every request; `/markdown-it/posts/<id>` renders a body as Hugo or Jekyll would, without source hints.
 */
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Middleware } from 'koa'
import { GitRunner } from '../git-runner.js'
import type { Services } from '../services.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { ENTRY_ID } from '../storage/names.js'
import { escapeHtml, renderHome, renderNotFound, renderPage, renderPost, type SiteChrome, type SiteEntry } from './pages.js'

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
  let markdownIt: { render: (body: string) => string } | null = null
  return async (ctx, next) => {
    const route = ctx.method === 'GET' || ctx.method === 'HEAD' ? routeOf(ctx.path) : null
    if (route === null) { await next(); return }
    const chrome = await chromeOf(services)
    let html: string | null = null
    if (route.kind === 'home') {
      const posts = (await entriesOf(services, POSTS)).filter(p => p.data.draft !== true).sort(newestFirst)
      html = renderHome(chrome, posts, await entriesOf(services, PAGES), new Map((await entriesOf(services, AUTHORS)).map(a => [a.id, a])))
    } else if (route.kind === 'post' || route.kind === 'foreign-post') {
      const post = await entryOf(services, POSTS, route.id)
      if (post !== null) {
        const body = typeof post.data.body === 'string' ? post.data.body : ''
        const authorId = post.data.author
        const author = typeof authorId === 'string' ? await entryOf(services, AUTHORS, authorId) : null
        if (route.kind === 'post') {
          const { renderMarkdown } = await import('../content/markdown/index.js')
          html = renderPost(chrome, post, renderMarkdown(body, { collection: POSTS, id: post.id }), author)
        } else {
          // As a generator configures markdown-it: raw HTML escaped, no typographic replacements. The
          // container's `data-cms-md` is the template's only addition: no source hints.
          markdownIt ??= new (await import('markdown-it')).default({ html: false, linkify: false, typographer: false })
          html = renderPost(chrome, post, `${FOREIGN_NOTE}<div data-cms-md="${escapeHtml(`${POSTS}/${post.id}#body`)}">\n${markdownIt.render(body)}</div>`, author)
        }
      }
    } else {
      const page = await entryOf(services, PAGES, route.id)
      if (page !== null) html = renderPage(chrome, page, (await services.content.registry.get(PAGES))?.layoutField ?? 'sections')
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

/** The settings singleton and the footer snippet, for every page. */
async function chromeOf (services: Services): Promise<SiteChrome> {
  const singleton = (await services.content.registry.get(SETTINGS))?.metadata.singletonId ?? 'site'
  return { settings: await entryOf(services, SETTINGS, singleton), footer: await entryOf(services, SNIPPETS, 'footer') }
}

/** A collection's readable entries; none when the collection is missing. */
async function entriesOf (services: Services, collection: string): Promise<SiteEntry[]> {
  const index = await indexOf(services, collection)
  if (index === null) return []
  return (await index.freshen(await index.all())).flatMap(e => e.data === undefined ? [] : [{ collection, id: e.id, data: e.data }])
}

/** One readable entry, or null. */
async function entryOf (services: Services, collection: string, id: string): Promise<SiteEntry | null> {
  if (!ENTRY_ID.test(id)) return null
  const index = await indexOf(services, collection)
  const e = index === null ? null : await index.get(id)
  return e?.data === undefined ? null : { collection, id, data: e.data }
}

/** A collection's index, or null when the config has no such collection. */
async function indexOf (services: Services, collection: string): Promise<CollectionIndex | null> {
  return await services.content.registry.get(collection) === null ? null : await services.content.index(collection)
}

/** The package's `fixtures-repo/`, from `lib/demo/` (tests) or `dist/lib/demo/` (the build). */
export async function fixturesRepoDir (): Promise<string> {
  const candidates = ['../../fixtures-repo/', '../../../fixtures-repo/'].map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  const found = candidates.find(dir => existsSync(path.join(dir, 'cms.config.yaml')))
  if (found === undefined) throw new Error('cannot find the git-cms package\'s fixtures-repo/ (above lib/demo)')
  return found
}

/** Copies fixtures-repo/ to a new temporary directory and commits it there (`git init -b main`, a local author). */
export async function createDemoRepo (): Promise<string> {
  const source = await fixturesRepoDir()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-demo-'))
  // GitRunner leaves out git's own variables: started as `git cms demo`, they could point at another repository.
  const git = new GitRunner({ baseDir: dir })
  try {
    await cp(source, dir, { recursive: true })
    await git.run(['init', '-q', '-b', 'main'])
    await git.run(['config', 'user.name', 'git-cms demo'])
    await git.run(['config', 'user.email', 'demo@git-cms.invalid'])
    await git.run(['add', '-A'])
    await git.run(['-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'Example site'])
    return dir
  } catch (err) {
    await rm(dir, { recursive: true, force: true })
    throw err
  }
}
