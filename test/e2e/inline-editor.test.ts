/**
 * The inline editor in a real browser: a tiny site page (a `data-cms` title and a Markdown body
 * rendered by renderMarkdown) served next to the CMS middleware over a real git repository.
 */
import t, { type Test } from 'tap'
import Koa from 'koa'
import { readFile, writeFile } from 'node:fs'
import { promisify } from 'node:util'
import path from 'node:path'
import matter from 'gray-matter'
import type { Page, Request } from 'playwright-core'
import { startServer, git, TEST_PASSWORD, type TestServer, listenOnLoopback } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'

const read = promisify(readFile)
const write = promisify(writeFile)
const POST = 'content/posts/inline.md'
const SOURCE = '---\ntitle: Inline editing\n---\nThe first paragraph.\n\nThe second paragraph, with **bold** words.\n\n## A heading\n\nThe last paragraph.\n'


/** The CMS plus one site page, `/post`, rendered from the base file on every request. */
async function startSite (t: Test): Promise<TestServer & { site: string }> {
  const s = await startServer(t, { files: { [POST]: SOURCE }, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const app = new Koa()
  app.use(async (ctx, next) => {
    if (ctx.path !== '/post') { await next(); return }
    const file = matter(await read(path.join(s.repoDir, POST), 'utf8'))
    const title = String(file.data.title).replace(/[&<>"]/g, c => `&#${c.charCodeAt(0)};`)
    ctx.type = 'html'
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Post</title>
<script src="/__cms/bootstrap.js"></script></head>
<body><main><h1 data-cms="posts/inline#title">${title}</h1>
<article>${renderMarkdown(file.content, { collection: 'posts', id: 'inline' })}</article>
<p id="outside">Not editable.</p></main></body></html>`
  })
  app.use(s.cms.middleware())
  const { origin } = await listenOnLoopback(t, app.callback())
  return { ...s, site: origin }
}

// Blocks by position (0 first paragraph, 1 second, 2 heading, 3 last): their text changes.
const block = (page: Page, n: number) => page.locator('[data-cms-md] [data-cms-src]').nth(n)
const status = (page: Page) => page.locator('.cms-ui [role=status]')

async function replaceText (page: Page, target: ReturnType<Page['locator']>, text: string): Promise<void> {
  await target.click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type(text)
}

/** Waits until the editor made the page's blocks editable (its toolbar shows once editing starts). */
async function editorReady (page: Page): Promise<void> {
  await page.locator('[data-cms-md] [data-cms-src].cms-editable').first().waitFor()
}

async function blur (target: ReturnType<Page['locator']>): Promise<void> {
  // The callback runs in the page, where the element has blur().
  await target.evaluate((el) => { (el as unknown as { blur: () => void }).blur() })
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('editor')
  // One browser for the file; each test has a context (cookies, storage) of its own.
  const browser = await launchBrowser(t)
  const newPage = async (t: Test): Promise<Page> => {
    const page = await browser.newPage()
    t.teardown(async () => { await page.context().close() })
    return page
  }

  // The two tests that leave the file as it was share a server; the one that publishes has its own.
  const unchanged = startSite(t)

  t.test('signed out: only bootstrap.js is loaded and nothing is editable', async t => {
    const s = await unchanged
    const page = await newPage(t)
    const requests: string[] = []
    page.on('request', (r: Request) => { requests.push(new URL(r.url()).pathname) })
    const session = page.waitForResponse(r => r.url().endsWith('/api/cms/auth/session'))
    await page.goto(`${s.site}/post`)
    t.same(await (await session).json(), { authenticated: false, identity: null })
    await page.waitForTimeout(200)
    await block(page, 0).click()
    t.same(requests.filter(p => p.startsWith('/__cms/')), ['/__cms/bootstrap.js'])
    t.same(requests.filter(p => p !== '/post' && !p.startsWith('/__cms/')), ['/api/cms/auth/session'])
    t.equal(await page.locator('[contenteditable]').count(), 0)
    t.equal(await page.locator('[role=toolbar]').count(), 0)
  })

  t.test('signed in: edit blocks and a title, Escape, publish, stale block', async t => {
    const s = await startSite(t)
    const file = path.join(s.repoDir, POST)
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    t.teardown(async () => { await context.close() })
    const page = await context.newPage()
    const login = await page.request.post(`${s.site}/api/cms/auth/login`, { data: { password: TEST_PASSWORD } })
    t.equal(login.status(), 200)
    const mutations: unknown[] = []
    page.on('request', (r: Request) => { if (r.url().endsWith('/api/cms/mutate')) mutations.push(r.postDataJSON()) })
    await page.goto(`${s.site}/post`)
    const toolbar = page.getByRole('toolbar', { name: 'Inline editor' })
    await editorReady(page)
    t.equal(await toolbar.count(), 0, 'no toolbar before editing starts')

    // A Markdown paragraph: click, type, blur -> an md_block draft; the base file is untouched.
    const first = block(page, 0)
    await replaceText(page, first, 'The first paragraph, edited in place.')
    for (const name of ['Bold', 'Italic', 'Code', 'Link', 'Publish', 'Discard']) {
      const b = toolbar.getByRole('button', { name, exact: true })
      t.equal(await b.count(), 1, `button ${name}`)
      const box = await b.boundingBox()
      t.ok(box !== null && box.x >= 0 && box.x + box.width <= 390, `${name} fits in 390 px`)
    }
    t.equal(await first.getAttribute('contenteditable'), 'true')
    await screenshot(page, 'inline-editor-editing')
    await blur(first)
    await t.resolves(status(page).filter({ hasText: 'Draft saved' }).waitFor())
    t.equal(await first.getAttribute('data-cms-state'), 'draft')
    t.equal(await first.getAttribute('contenteditable'), null, 'no longer editable after blur')
    t.equal(await read(file, 'utf8'), SOURCE, 'the base file did not change')
    t.match(git(s.repoDir, 'for-each-ref', 'refs/cms/drafts/'), /refs\/cms\/drafts\//, 'a draft ref exists')
    t.match(mutations.at(-1), { type: 'md_block', collection: 'posts', id: 'inline', blockPath: 'body', src: /^\d+:\d+:[0-9a-f]{16}$/ })

    // Unchanged since focus: no request.
    const count = mutations.length
    await first.click()
    await blur(first)
    await page.waitForTimeout(150)
    t.equal(mutations.length, count, 'no request for an unchanged block')

    // Bold with Ctrl+B, then Escape restores the block as it was.
    const second = block(page, 1)
    const before = await second.innerHTML()
    await second.click()
    await page.keyboard.press('Control+A')
    await page.keyboard.press('Control+B')
    t.match(await second.innerHTML(), /^<strong>/, 'Ctrl+B wraps the selection in <strong>')
    t.notMatch(await second.innerHTML(), /<strong>[^<]*<strong>/, 'no nested <strong>')
    await page.keyboard.press('Escape')
    t.equal(await second.innerHTML(), before, 'Escape restores the block')
    t.equal(await second.getAttribute('contenteditable'), null)
    await page.waitForTimeout(150)
    t.equal(mutations.length, count, 'Escape sends nothing')

    // A later block after the first was saved (its source range moved): still saves, with Ctrl+S.
    await second.click()
    await page.keyboard.press('End')
    await page.keyboard.type(' More words.')
    await page.keyboard.press('Control+S')
    await t.resolves(page.locator('[data-cms-state=draft]').nth(1).waitFor())
    await blur(second)
    t.equal(await read(file, 'utf8'), SOURCE, 'still only drafts')

    // Publish: the file changes and, with CMS_GIT_ON_PUBLISH=true, a commit names the entry.
    await toolbar.getByRole('button', { name: 'Publish' }).click()
    await t.resolves(status(page).filter({ hasText: 'Published 1 entry: posts/inline' }).waitFor())
    t.match(await status(page).textContent(), /Commit [0-9a-f]{7}\./, 'the status names the commit')
    const published = await read(file, 'utf8')
    t.match(published, /The first paragraph, edited in place\.\n\nThe second paragraph, with \*\*bold\*\* words\. More words\.\n\n## A heading/)
    t.match(published, /^---\ntitle: Inline editing\n---\n/)
    t.match(git(s.repoDir, 'log', '-1', '--format=%s%n%b'), /posts\/inline/)
    t.equal(git(s.repoDir, 'status', '--porcelain', '--', POST), '', 'the published file is committed')

    // A data-cms title: save_field with the element's text.
    const title = page.locator('h1[data-cms="posts/inline#title"]')
    await replaceText(page, title, 'A new title')
    await page.keyboard.press('Enter')
    await t.resolves(status(page).filter({ hasText: /^(Saved|Draft saved)$/ }).waitFor())
    t.match(mutations.at(-1), { type: 'save_field', collection: 'posts', id: 'inline', field: 'title', value: 'A new title' })
    t.match(await read(file, 'utf8'), /^---\ntitle: A new title\n---\n/, 'password mode: save_field writes the file')

    // A revision conflict on a field: the file changes between focus and save.
    const read1 = page.waitForResponse(r => r.url().includes('/api/cms/entries?'))
    await title.click()
    await read1
    await write(file, (await read(file, 'utf8')).replace('title: A new title', 'title: Their title'))
    await page.keyboard.press('Control+A')
    await page.keyboard.type('My title')
    await page.keyboard.press('Control+S')
    await t.resolves(page.getByRole('alert').filter({ hasText: 'changed elsewhere' }).waitFor())
    t.equal(await title.textContent(), 'My title', 'the typed title stays')
    t.match(await read(file, 'utf8'), /^---\ntitle: Their title\n/, 'the other change is not overwritten')

    // Stale block: the file changes behind the page's back, then a later block is edited.
    await page.reload()
    await editorReady(page)
    const current = await read(file, 'utf8')
    await write(file, current.replace('The first paragraph, edited in place.', 'Changed by someone else, with a longer text.'))
    const last = block(page, 3)
    await replaceText(page, last, 'My words that must not be lost.')
    await blur(last)
    const panel = page.getByRole('alert')
    await t.resolves(panel.filter({ hasText: 'changed elsewhere' }).waitFor())
    t.equal(await last.textContent(), 'My words that must not be lost.', 'the typed text stays in the page')
    t.equal(await panel.getByRole('textbox', { name: 'Your text' }).inputValue(), 'My words that must not be lost.')
    t.equal(await panel.getByRole('button', { name: 'Copy my text' }).count(), 1)
    t.equal(await panel.getByRole('button', { name: 'Reload' }).count(), 1)
    await screenshot(page, 'inline-editor-conflict')
    t.notMatch(await read(file, 'utf8'), /must not be lost/)
  })

  t.test('Discard drops the drafts and reloads', async t => {
    const s = await unchanged
    const page = await newPage(t)
    await page.request.post(`${s.site}/api/cms/auth/login`, { data: { password: TEST_PASSWORD } })
    await page.goto(`${s.site}/post`)
    await editorReady(page)
    const first = block(page, 0)
    await replaceText(page, first, 'To be discarded. ')
    // Paste arrives as plain text: the HTML flavour (an image with a handler, bold) is ignored.
    // (A string: the test's TypeScript has no DOM types; this runs in the page.)
    await page.evaluate(`(() => {
      const el = document.querySelector('[data-cms-md] [data-cms-src]')
      const data = new DataTransfer()
      data.setData('text/html', '<img src=x onerror="window.pwned=1"><b>Pasted</b>')
      data.setData('text/plain', 'Pasted\\nline')
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    })()`)
    const html = async (): Promise<string> => (await first.innerHTML()).replace(/&nbsp;/g, ' ')
    t.equal(await html(), 'To be discarded. Pasted<br>line')

    // Link: a javascript: URL is refused, an https one wraps the selection.
    await page.keyboard.press('Control+A')
    page.once('dialog', d => { void d.accept('javascript:alert(1)') })
    await page.keyboard.press('Control+K')
    await status(page).filter({ hasText: 'Link not added' }).waitFor()
    t.notMatch(await html(), /<a /)
    page.once('dialog', d => { void d.accept('https://example.org/page') })
    await page.getByRole('button', { name: 'Link' }).click()
    t.match(await html(), /^<a href="https:\/\/example\.org\/page">To be discarded\. Pasted<br>line<\/a>$/)
    await blur(first)
    await status(page).filter({ hasText: 'Draft saved' }).waitFor()
    t.equal((await (await page.request.get(`${s.site}/api/cms/draft`)).json()).count, 1)
    page.once('dialog', d => { void d.accept() })
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Discard' }).click()])
    t.equal((await (await page.request.get(`${s.site}/api/cms/draft`)).json()).count, 0)
    t.equal(await block(page, 0).textContent(), 'The first paragraph.', 'the page shows the base text again')
    t.equal(await read(path.join(s.repoDir, POST), 'utf8'), SOURCE)
  })
}
