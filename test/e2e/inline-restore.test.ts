/**
 * The inline editor keeps a block's unsaved text in the browser: type in a block, close the
 * context without leaving the block (the "crash"), reopen the page with the same storage state:
 * the toolbar offers "Restore unsaved changes" / "Discard unsaved changes". Discard changes
 * nothing; Restore puts the text back and saves it as an md_block draft, clearing the storage.
 */
import t, { type Test } from 'tap'
import Koa from 'koa'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { statSync, readdirSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import matter from 'gray-matter'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { startServer, repoFingerprint, TEST_PASSWORD, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser } from '../helpers/browser.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const POST = 'content/posts/inline.md'
const SOURCE = '---\ntitle: Inline editing\n---\nThe first paragraph.\n\nThe second paragraph.\n'
const PREFIX = 'git-cms:unsaved-block:v1:'
type State = Awaited<ReturnType<BrowserContext['storageState']>>
/** The page globals the callbacks below use (they run in the browser; the tests have no DOM types). */
interface Win {
  localStorage: { getItem: (k: string) => string | null }
  document: { activeElement: { textContent: string | null, blur: () => void } | null, documentElement: { scrollWidth: number } }
}

/** Bundles the browser code when dist/browser is missing or older than lib/browser/editor. */
function ensureBundle (): void {
  const src = path.join(ROOT, 'lib/browser/editor')
  const newest = Math.max(...readdirSync(src).map(f => statSync(path.join(src, f)).mtimeMs))
  let built = 0
  try { built = statSync(path.join(ROOT, 'dist/browser/editor.js')).mtimeMs } catch {}
  if (built < newest) execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-browser.mjs')], { cwd: ROOT })
}

/** The CMS plus one site page, `/post`, rendered from the base file on every request. */
async function startSite (t: Test): Promise<TestServer & { site: string }> {
  const s = await startServer(t, { files: { [POST]: SOURCE } })
  const app = new Koa()
  app.use(async (ctx, next) => {
    if (ctx.path !== '/post') { await next(); return }
    const file = matter(await readFile(path.join(s.repoDir, POST), 'utf8'))
    ctx.type = 'html'
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Post</title>
<script src="/__cms/bootstrap.js"></script></head>
<body><main><article>${renderMarkdown(file.content, { collection: 'posts', id: 'inline' })}</article></main></body></html>`
  })
  app.use(s.cms.middleware())
  const server = createServer(app.callback())
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { ...s, site: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** @returns the values of this editor's unsaved-block keys in the page's storage */
async function kept (page: Page): Promise<string[]> {
  return await page.evaluate(prefix => Object.keys((globalThis as unknown as Win).localStorage).filter(k => k.startsWith(prefix)).map(k => (globalThis as unknown as Win).localStorage.getItem(k) ?? ''), PREFIX)
}

/** Opens the page in a new context with that storage state (signed in). */
async function open (t: Test, browser: Browser, s: { site: string }, state: State | undefined): Promise<{ context: BrowserContext, page: Page }> {
  const context = await browser.newContext({ storageState: state, viewport: { width: 390, height: 844 } })
  const page = await context.newPage()
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  if (state === undefined) t.equal((await page.request.post(`${s.site}/api/cms/auth/login`, { data: { password: TEST_PASSWORD } })).status(), 200)
  await page.goto(`${s.site}/post`)
  await page.getByRole('toolbar', { name: 'Inline editor' }).waitFor()
  await page.locator('.cms-ui [role=status]').filter({ hasText: /Click any outlined text|unsaved text/ }).waitFor()
  return { context, page }
}

/** Types into the first block and closes the context without leaving it. @returns the state left */
async function typeAndCrash (t: Test, browser: Browser, s: { site: string }, state: State | undefined, text: string): Promise<State> {
  const { context, page } = await open(t, browser, s, state)
  const first = page.locator('[data-cms-md] [data-cms-src]').first()
  await first.click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type(text)
  await page.waitForFunction(([prefix, typed]) => Object.keys((globalThis as unknown as Win).localStorage).some(k => k.startsWith(prefix!) && ((globalThis as unknown as Win).localStorage.getItem(k) ?? '').includes(typed!)), [PREFIX, text])
  const left = await context.storageState()
  await context.close()
  return left
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBundle()

  t.test('a block typed into survives a crash: Discard and Restore', async t => {
    const s = await startSite(t)
    const browser = await launchBrowser(t)
    const fingerprint = await repoFingerprint(s.repoDir)

    // Discard: nothing is sent or written, the offer and the kept text are gone.
    let state = await typeAndCrash(t, browser, s, undefined, 'Typed before the crash.')
    let { context, page } = await open(t, browser, s, state)
    const mutations: unknown[] = []
    page.on('request', (r: Request) => { if (r.url().endsWith('/api/cms/mutate')) mutations.push(r.postDataJSON()) })
    const toolbar = page.getByRole('toolbar', { name: 'Inline editor' })
    await page.locator('.cms-ui [role=status]').filter({ hasText: 'This browser kept unsaved text of 1 block on this page.' }).waitFor()
    t.equal(await page.locator('[data-cms-src]').first().textContent(), 'The first paragraph.', 'the page is unchanged until the editor chooses')
    await toolbar.getByRole('button', { name: 'Discard unsaved changes' }).click()
    await page.locator('.cms-ui [role=status]').filter({ hasText: 'Unsaved text discarded.' }).waitFor()
    t.equal(await toolbar.getByRole('button', { name: 'Restore unsaved changes' }).count(), 0, 'the offer is gone')
    t.same(await kept(page), [])
    t.same(mutations, [])
    t.equal(await repoFingerprint(s.repoDir), fingerprint, 'nothing written')
    const signedIn = await context.storageState()
    await context.close()

    // Restore: the text is back in its block and saved as a draft; the storage is cleared.
    state = await typeAndCrash(t, browser, s, signedIn, 'Typed again before the crash.')
    ;({ context, page } = await open(t, browser, s, state))
    page.on('request', (r: Request) => { if (r.url().endsWith('/api/cms/mutate')) mutations.push(r.postDataJSON()) })
    const restore = page.getByRole('toolbar', { name: 'Inline editor' }).getByRole('button', { name: 'Restore unsaved changes' })
    await restore.focus()
    await page.keyboard.press('Enter')
    await page.locator('.cms-ui [role=status]').filter({ hasText: 'Draft saved' }).waitFor()
    t.equal(await page.locator('[data-cms-src]').first().textContent(), 'Typed again before the crash.')
    t.equal(mutations.length, 1, 'one md_block save')
    t.match(mutations[0], { type: 'md_block', collection: 'posts', id: 'inline', blockPath: 'body', html: /Typed again before the crash\./ })
    t.same(await kept(page), [], 'a saved block keeps nothing in the browser')
    t.equal(await readFile(path.join(s.repoDir, POST), 'utf8'), SOURCE, 'a draft: the base file is unchanged')
    await context.close()
  })
}
