/**
 * Sites built by the real generators for the in-place editor's tests: the sources under
 * test/fixtures/generators/<name>/ are copied into a throwaway git repository (the one git-cms
 * edits) and built into a temp folder by Eleventy (its npm package, markdown-it with
 * markdown-it-anchor, the Prism plugin, an eleventy-img-like `<picture>` transform and a
 * shortcode), Debian's `hugo`, Debian's `jekyll`, or @mdx-js/mdx with a tiny JSX-to-HTML runtime.
 * The built folder is served beside git-cms on one origin.
 */
import { cp, mkdtemp, rm, readFile, writeFile, mkdir, readdir, stat } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import Koa from 'koa'
import { git, startServer, listenOnLoopback, type TestServer } from './site.js'
import { fromRoot } from './repo-root.js'

const run = promisify(execFile)
const FIXTURES = fromRoot('test/fixtures/generators/')

/** The generators the fixtures cover. */
export type GeneratorName = 'eleventy' | 'hugo' | 'jekyll' | 'mdx'

/** One built page: the entry it shows and where the site serves it. */
export interface BuiltPage { collection: string, id: string, file: string, url: string }

/** The page of each fixture that the tests edit. */
export const GENERATOR_PAGES: Record<GeneratorName, BuiltPage> = {
  eleventy: { collection: 'posts', id: 'first-post', file: 'src/posts/first-post.md', url: '/posts/first-post/' },
  hugo: { collection: 'posts', id: 'hugo-post', file: 'content/posts/hugo-post.md', url: '/posts/hugo-post/' },
  jekyll: { collection: 'posts', id: '2026-01-20-a-jekyll-post', file: '_posts/2026-01-20-a-jekyll-post.md', url: '/2026/01/20/a-jekyll-post.html' },
  mdx: { collection: 'blog', id: 'using-mdx', file: 'content/blog/using-mdx.mdx', url: '/blog/using-mdx/' }
}

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * Copies a generator's sources into a new git repository and builds the site from them.
 * @param t the tap test (removes both folders at teardown)
 * @param name the generator
 * @returns the repository and the built site's folder
 */
export async function buildGeneratorSite (t: Teardown, name: GeneratorName): Promise<{ repoDir: string, outDir: string }> {
  const repoDir = await mkdtemp(path.join(os.tmpdir(), `git-cms-${name}-src-`))
  const outDir = await mkdtemp(path.join(os.tmpdir(), `git-cms-${name}-out-`))
  t.teardown(async () => { await rm(repoDir, { recursive: true, force: true }); await rm(outDir, { recursive: true, force: true }) })
  await cp(path.join(FIXTURES, name), repoDir, { recursive: true })
  git(repoDir, 'init', '-q', '-b', 'main')
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-q', '-m', 'site')
  if (name === 'eleventy') await buildEleventy(repoDir, outDir)
  else if (name === 'hugo') await run('hugo', ['--source', repoDir, '--destination', outDir, '--noBuildLock', '--quiet'])
  else if (name === 'jekyll') await run('jekyll', ['build', '--source', repoDir, '--destination', outDir, '--disable-disk-cache', '--quiet'])
  else await buildMdx(repoDir, outDir)
  return { repoDir, outDir }
}

/** Eleventy 3 through its API, configured as a starter blog is (the config lives here). */
async function buildEleventy (repoDir: string, outDir: string): Promise<void> {
  // Named through variables: neither package ships type declarations.
  const eleventyPackage = '@11ty/eleventy'
  const prismPackage = '@11ty/eleventy-plugin-syntaxhighlight'
  const { default: Eleventy } = await import(eleventyPackage) as { default: new (input: string, output: string, opts: object) => { write: () => Promise<unknown> } }
  const { default: syntaxHighlight } = await import(prismPackage) as { default: unknown }
  const { default: markdownIt } = await import('markdown-it')
  const { default: anchor } = await import('markdown-it-anchor')
  const input = path.join(repoDir, 'src')
  const elev = new Eleventy(input, outDir, {
    quietMode: true,
    configPath: false,
    config: (config: {
      addPlugin: (p: unknown) => void
      setLibrary: (ext: string, lib: unknown) => void
      addTransform: (name: string, fn: (content: string) => string) => void
      addShortcode: (name: string, fn: (text: string) => string) => void
    }) => {
      config.addPlugin(syntaxHighlight)
      config.setLibrary('md', markdownIt({ html: true, typographer: true })
        .use(anchor, { permalink: anchor.permalink.ariaHidden({ placement: 'after', symbol: '#' }) }))
      // What eleventy-img's transform makes of an <img>: a <picture> with sources and a srcset.
      config.addTransform('picture', (content: string) => content.replace(/<img src="([^"]+)\.png" alt="([^"]*)">/g,
        (_m, src: string, alt: string) => `<picture><source type="image/png" srcset="${src}.png 480w, ${src}.png 960w" sizes="120px"><img src="${src}.png" alt="${alt}" width="480" height="240" loading="lazy" decoding="async"></picture>`))
      config.addShortcode('callout', (text: string) => `<div class="callout"><p>${text}</p></div>`)
    }
  })
  await elev.write()
  await cp(path.join(input, 'img'), path.join(outDir, 'img'), { recursive: true })
  await cp(path.join(input, 'style.css'), path.join(outDir, 'style.css'))
}

/** A JSX node of the tiny runtime: an element (tag and props) or what a component returned. */
interface JsxElement { type: string, props: Record<string, unknown> }
const VOID = new Set(['img', 'br', 'hr', 'input', 'source', 'meta', 'link'])
const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, c => `&#${c.charCodeAt(0)};`)

function renderToString (node: unknown): string {
  if (node === null || node === undefined || typeof node === 'boolean') return ''
  if (typeof node === 'string' || typeof node === 'number') return escapeHtml(String(node))
  if (Array.isArray(node)) return node.map(renderToString).join('')
  const { type, props } = node as JsxElement
  const attrs = Object.entries(props).filter(([k, v]) => k !== 'children' && v !== undefined && v !== null && v !== false)
    .map(([k, v]) => ` ${k === 'className' ? 'class' : k}="${escapeHtml(String(v))}"`).join('')
  const inner = renderToString(props.children)
  return type === '' ? inner : VOID.has(type) ? `<${type}${attrs}>` : `<${type}${attrs}>${inner}</${type}>`
}

/** Each `.mdx` entry compiled by @mdx-js/mdx and rendered to HTML with a tiny runtime. */
async function buildMdx (repoDir: string, outDir: string): Promise<void> {
  const { evaluate } = await import('@mdx-js/mdx')
  const { default: matter } = await import('gray-matter')
  const jsx = (type: unknown, props: Record<string, unknown>): unknown =>
    typeof type === 'function' ? (type as (p: object) => unknown)(props) : { type: type === Fragment ? '' : type, props }
  const Fragment = Symbol('Fragment')
  const Callout = (props: { kind?: string, children?: unknown }): unknown => ({ type: 'div', props: { className: `callout callout-${props.kind ?? 'note'}`, children: props.children } })
  const template = await readFile(path.join(repoDir, 'page.html'), 'utf8')
  const dir = path.join(repoDir, 'content/blog')
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.mdx')) continue
    const file = matter(await readFile(path.join(dir, name), 'utf8'))
    const mod = await evaluate(file.content, { Fragment, jsx, jsxs: jsx, development: false } as unknown as Parameters<typeof evaluate>[1])
    const content = renderToString((mod.default as (p: object) => unknown)({ components: { Callout } }))
    const id = name.replace(/\.mdx$/, '')
    const html = template.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => key === 'content' ? content : escapeHtml(key === 'id' ? id : String(file.data[key] ?? '')))
    await mkdir(path.join(outDir, 'blog', id), { recursive: true })
    await writeFile(path.join(outDir, 'blog', id, 'index.html'), html)
  }
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.png': 'image/png', '.js': 'text/javascript' }

/**
 * Builds a generator's site and serves it beside git-cms on one origin (built files first, then
 * the service's routes).
 * @param t the tap test
 * @param name the generator
 * @returns the server, the site's origin and the repository
 */
export async function serveGeneratorSite (t: Teardown, name: GeneratorName): Promise<{ s: TestServer, site: string, outDir: string }> {
  const { repoDir, outDir } = await buildGeneratorSite(t, name)
  const s = await startServer(t, { repoDir })
  const app = new Koa()
  app.use(async (ctx, next) => {
    const rel = path.normalize(decodeURIComponent(ctx.path)).replace(/^(\.\.(\/|$))+/, '')
    let file = path.join(outDir, rel)
    try {
      if ((await stat(file)).isDirectory()) file = path.join(file, 'index.html')
      const body = await readFile(file)
      ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream'
      ctx.body = body
    } catch { await next() }
  })
  app.use(s.cms.middleware())
  const { origin } = await listenOnLoopback(t, app.callback())
  return { s, site: origin, outDir }
}
