/**
 * The Studio's Markdown body editor (CodeMirror 6) in a real browser: toolbar buttons and
 * Ctrl+B, I, K produce the expected Markdown; the live preview is the server's renderMarkdown;
 * opening and saving an untouched body writes nothing; a pasted image is uploaded and inserted.
 * And `POST /api/cms/preview` itself: its happy path and every refusal, which change nothing.
 */
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { repoFingerprint, startServer, TEST_PASSWORD, writeHeaders, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'

const POST = 'content/posts/hello.md'
const ORIGINAL = '---\ntitle: Hello world\n---\nThe body, *as it was*.\r\nWith a CRLF line and  two spaces.\n'
const CONFIG = {
  collections: {
    posts: { format: 'md' as const, label: 'Posts', schema: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } } }
  }
}
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
/** The page globals the callbacks below use (they run in the browser; the tests have no DOM types). */
interface Win {
  document: {
    querySelector: (s: string) => ({ innerHTML: string, dispatchEvent: (e: unknown) => boolean }) | null
    createElement: (tag: string) => { innerHTML: string }
  }
  DataTransfer: new () => { items: { add: (f: unknown) => void } }
  File: new (parts: unknown[], name: string, opts: { type: string }) => unknown
  ClipboardEvent: new (type: string, init: Record<string, unknown>) => unknown
  Uint8Array: typeof Uint8Array
  atob: (s: string) => string
}


/** @returns the entry's revision as the API has it */
async function revision (s: TestServer, cookie: string): Promise<number> {
  const res = await s.request('/api/cms/entries?collection=posts&id=hello', { headers: { cookie } })
  return ((await res.json()) as { entries: Array<{ revision: number }> }).entries[0]!.revision
}

/** Replaces the editor's text by typing, selects it all, and runs a key or a toolbar button. */
async function format (page: Page, text: string, action: string): Promise<string> {
  const editor = page.getByLabel('Body', { exact: true })
  await editor.click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type(text)
  await page.keyboard.press('Control+A')
  if (action.startsWith('Control+')) await page.keyboard.press(action)
  else await page.getByRole('toolbar', { name: 'Body formatting' }).getByRole('button', { name: action }).click()
  return await editor.innerText()
}

/** @returns a signed-in page */
async function signedIn (t: Test, browser: Browser, s: TestServer, width = 1100): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } })
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  await page.goto(`${s.url}/admin`)
  await page.getByLabel('Password').fill(TEST_PASSWORD)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('heading', { name: 'Collections' }).waitFor()
  return page
}

t.test('POST /preview renders like the site and refuses bad input', async t => {
  const s = await startServer(t, { files: { [POST]: ORIGINAL }, config: CONFIG })
  const cookie = await s.login()
  const before = await repoFingerprint(s.repoDir)
  const post = async (body: unknown, headers = writeHeaders(cookie)): Promise<Response> =>
    await s.request('/api/cms/preview', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const md = '# Hi\n\nSome **bold**.\n\n<script>alert(1)</script><img src=x onerror=alert(1)>'
  const ok = await post({ collection: 'posts', id: 'hello', body: md })
  t.equal(ok.status, 200)
  const { html } = await ok.json() as { html: string }
  t.equal(html, renderMarkdown(md, { collection: 'posts', id: 'hello' }))
  t.notMatch(html, /<script|onerror/, 'sanitized')
  t.equal((await post({ collection: 'posts', id: 'hello', body: 5 })).status, 400, 'wrong type')
  t.equal((await post({ collection: 'posts', id: 'hello' })).status, 400, 'missing body')
  t.equal((await post({ collection: '../x', id: 'hello', body: '' })).status, 400, 'hostile collection')
  t.equal((await post({ collection: 'posts', id: '__proto__', body: '' })).status, 400, 'reserved id')
  t.equal((await post({ collection: 'posts', id: '../../etc/passwd', body: '' })).status, 400, 'hostile id')
  t.equal((await post({ collection: 'posts', id: 'hello', body: 'x'.repeat(600_000) })).status, 413, 'oversized body')
  t.equal((await post('[1]')).status, 400, 'not an object')
  t.equal((await post('body=x', { ...writeHeaders(cookie), 'content-type': 'text/plain' })).status, 415, 'not JSON')
  t.equal((await post({ collection: 'posts', id: 'hello', body: '' }, { cookie, 'content-type': 'application/json' })).status, 403, 'no CSRF header')
  t.equal((await post({ collection: 'posts', id: 'hello', body: '' }, { 'content-type': 'application/json', 'x-cms-request': '1' })).status, 401, 'signed out')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
})

if (!hasChromium()) {
  t.comment('Chromium is not installed at /usr/bin/chromium: the browser test is skipped')
} else {
  ensureBrowserBundle('studio')

  t.test('toolbar, shortcuts, preview, no-op save, pasted image', async t => {
    const s = await startServer(t, { files: { [POST]: ORIGINAL }, config: CONFIG })
    const cookie = await s.login()
    const browser = await launchBrowser(t)
    const page = await signedIn(t, browser, s)
    await page.goto(`${s.url}/admin/cms/posts/hello`)
    const editor = page.getByLabel('Body', { exact: true })
    await editor.waitFor()
    const toolbar = page.getByRole('toolbar', { name: 'Body formatting' })
    for (const name of ['Heading', 'Bold (Ctrl+B)', 'Italic (Ctrl+I)', 'Link (Ctrl+K)', 'Bulleted list', 'Quote', 'Code', 'Image']) {
      t.equal(await toolbar.getByRole('button', { name, exact: true }).count(), 1, `button ${name}`)
    }

    // Opening and saving an untouched body writes nothing.
    const rev = await revision(s, cookie)
    const fingerprint = await repoFingerprint(s.repoDir)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    t.equal(await readFile(path.join(s.repoDir, POST), 'utf8'), ORIGINAL, 'the file is byte for byte the same')
    t.equal(await revision(s, cookie), rev, 'the revision did not move')
    t.equal(await repoFingerprint(s.repoDir), fingerprint)

    // Shortcuts and toolbar buttons.
    t.equal(await format(page, 'Hello', 'Control+B'), '**Hello**')
    t.equal(await format(page, 'Hello', 'Control+I'), '_Hello_')
    t.equal(await format(page, 'Hello', 'Control+K'), '[Hello](https://)')
    await page.keyboard.type('https://example.com')
    t.equal(await editor.innerText(), '[Hello](https://example.com)', 'the URL is selected after Ctrl+K')
    t.equal(await format(page, 'Title', 'Heading'), '## Title')
    t.equal(await format(page, 'Item', 'Bulleted list'), '- Item')
    t.equal(await format(page, 'Said', 'Quote'), '> Said')
    t.equal(await format(page, 'x', 'Code'), '`x`')
    t.equal(await format(page, 'Hello', 'Bold (Ctrl+B)'), '**Hello**')

    // The preview is the server's renderMarkdown of what is typed.
    await editor.click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('## A heading\n\nSome **bold** and a [link](https://example.com).')
    const body = '## A heading\n\nSome **bold** and a [link](https://example.com).'
    const expected = renderMarkdown(body, { collection: 'posts', id: 'hello' })
    await page.waitForFunction(html => {
      const w = globalThis as unknown as Win
      const probe = w.document.createElement('div')
      probe.innerHTML = html
      return w.document.querySelector('.md-preview-body')?.innerHTML === probe.innerHTML
    }, expected)
    t.pass('the preview shows the server rendering')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    t.match(await readFile(path.join(s.repoDir, POST), 'utf8'), /\n---\n## A heading\n\nSome \*\*bold\*\* and a \[link\]\(https:\/\/example\.com\)\.\n?$/)

    // A pasted image: uploaded, and its Markdown inserted at the cursor.
    await editor.click()
    await page.keyboard.press('Control+End')
    await page.keyboard.press('Enter')
    await page.evaluate(b64 => {
      const w = globalThis as unknown as Win
      const bytes = w.Uint8Array.from(w.atob(b64), c => c.charCodeAt(0))
      const dt = new w.DataTransfer()
      dt.items.add(new w.File([bytes], 'pasted pic.png', { type: 'image/png' }))
      w.document.querySelector('.cm-content')?.dispatchEvent(new w.ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }))
    }, PNG.toString('base64'))
    await page.getByText('Uploaded pasted pic.png.').waitFor()
    const text = await editor.innerText()
    const m = /!\[pasted pic\]\((\/uploads\/\d{4}\/\d{2}\/[^)]+\.png)\)$/.exec(text)
    t.ok(m !== null, `image Markdown inserted at the cursor: ${text}`)
    t.same(await readFile(path.join(s.repoDir, 'public', m?.[1] ?? 'missing')), PNG, 'the upload is stored')
    await screenshot(page, 'studio-markdown-editor')
  })
}
