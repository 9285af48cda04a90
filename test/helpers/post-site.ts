import Koa from 'koa'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import matter from 'gray-matter'
import { startServer, listenOnLoopback, type TestServer } from './site.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'

type Teardown = Parameters<typeof startServer>[0]

/**
 * The CMS over a repository holding one post, plus one site page, `/post`, rendered from the post's
 * base file on every request and loading the in-place editor's bootstrap.
 * @param t the tap test (closes both at teardown)
 * @param post the post's file, e.g. `content/posts/inline.md` (its id is the file's name)
 * @param source the post's text
 * @param heading an `<h1>` put above the article, when given
 * @returns the server, with `site`: the origin serving `/post` and the CMS
 */
export async function startPostSite (t: Teardown, post: string, source: string, heading?: string): Promise<TestServer & { site: string }> {
  const s = await startServer(t, { files: { [post]: source } })
  const id = path.basename(post, path.extname(post))
  const collection = path.basename(path.dirname(post))
  const app = new Koa()
  app.use(async (ctx, next) => {
    if (ctx.path !== '/post') { await next(); return }
    const file = matter(await readFile(path.join(s.repoDir, post), 'utf8'))
    ctx.type = 'html'
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Post</title>
<script src="/__cms/bootstrap.js"></script></head>
<body><main>${heading === undefined ? '' : `<h1>${heading}</h1>`}<article>${renderMarkdown(file.content, { collection, id })}</article></main></body></html>`
  })
  app.use(s.cms.middleware())
  const { origin } = await listenOnLoopback(t, app.callback())
  return { ...s, site: origin }
}
