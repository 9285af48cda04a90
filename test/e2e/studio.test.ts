/**
 * The admin Studio in a real browser (Debian's Chromium): sign-in, dashboard, search, a schema
 * form with Save, a revision conflict recovered with Overwrite, an image upload, restore from
 * history and publishing drafts, each checked against the files of a real temporary repository.
 */
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import { statSync } from 'node:fs'
import path from 'node:path'
import matter from 'gray-matter'
import type { Browser, Page } from 'playwright-core'
import { startServer, TEST_PASSWORD, writeHeaders, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'

const POST = 'content/posts/hello.md'
const FILES: Record<string, string> = {
  [POST]: '---\ntitle: Hello world\nsummary: The first post\nlegacy: kept by the Studio\n---\nThe body of the first post.\n',
  'content/posts/second.md': '---\ntitle: Second post\n---\nAnother body.\n',
  'content/posts/third.md': '---\ntitle: Third thing\n---\nA third body.\n',
  'content/authors/ada.json': '{\n  "name": "Ada Lovelace",\n  "avatar": ""\n}\n'
}
const CONFIG = {
  collections: {
    posts: {
      format: 'md' as const,
      label: 'Blog posts',
      icon: '📝',
      schema: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1 },
          summary: { type: 'string', title: 'Short summary' },
          date: { type: 'string', format: 'date' },
          featured: { type: 'boolean' },
          status: { type: 'string', enum: ['idea', 'ready'] },
          tags: { type: 'array', items: { type: 'string' } },
          seo: { type: 'object', properties: { description: { type: 'string' } } },
          body: { type: 'string' }
        },
        required: ['title']
      }
    },
    authors: {
      format: 'json' as const,
      label: 'Authors',
      schema: { type: 'object', properties: { name: { type: 'string' }, avatar: { type: 'string' } } }
    }
  }
}
// A real 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')


/** @returns the front matter of a file in the temp repository */
async function front (s: TestServer, file: string): Promise<Record<string, unknown>> {
  return matter(await readFile(path.join(s.repoDir, file), 'utf8')).data
}

/** Signs in through the form on /admin. */
async function signIn (page: Page, s: TestServer): Promise<void> {
  await page.goto(`${s.url}/admin`)
  await page.getByLabel('Password').fill(TEST_PASSWORD)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('heading', { name: 'Collections' }).waitFor()
}

/** @returns a page at 390 px wide, failing the test on page errors */
async function newPage (t: Test, browser: Browser, width = 1100): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 800 } })
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  return page
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('the shell: CSP, no-store, settings block; enableAdmin false is 404', async t => {
    const s = await startServer(t, { files: FILES, config: CONFIG })
    const res = await s.request('/admin/cms/posts/hello')
    t.equal(res.status, 200)
    t.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    t.equal(res.headers.get('cache-control'), 'no-store')
    const html = await res.text()
    t.match(html, /"label":"Blog posts"/)
    t.notMatch(html, /<script>(?!<)/, 'no inline script')
    t.equal((await s.request('/admin/assets/studio.js')).status, 200)
    t.equal((await s.request('/admin/assets/other.js')).status, 404)
    t.equal((await s.request('/admin/cms/a/b/c')).status, 404)
    const off = await startServer(t, { files: FILES, config: { ...CONFIG, enableAdmin: false } })
    t.equal((await off.request('/admin')).status, 404)
    t.equal((await off.request('/admin/assets/studio.js')).status, 404)
  })

  t.test('sign in, search, edit and save, conflict, upload, history', async t => {
    const s = await startServer(t, { files: FILES, config: CONFIG })
    const browser = await launchBrowser(t)
    const page = await newPage(t, browser, 390)

    // Signed out, an entry URL shows the sign-in form and no content.
    await page.goto(`${s.url}/admin/cms/posts/hello`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    t.equal(await page.getByText('Hello world').count(), 0)
    await page.getByLabel('Password').fill('wrong password')
    await page.getByLabel('Password').press('Enter')
    t.match(await page.getByRole('alert').textContent(), /not correct/)
    await screenshot(page, 'studio-signin')

    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByLabel('Title').waitFor()
    await page.goto(`${s.url}/admin`)
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    t.match(new URL(page.url()).pathname, '/admin/cms')
    const posts = await (await s.request('/api/cms/entries?collection=posts', { headers: { cookie: await s.login() } })).json() as { pagination: { total: number } }
    await page.getByRole('link', { name: `Blog posts ${posts.pagination.total} entries` }).waitFor()
    await screenshot(page, 'studio-dashboard')

    // Search filters as you type.
    await page.getByRole('link', { name: /Blog posts/ }).click()
    await page.getByRole('link', { name: 'Second post' }).waitFor()
    await page.getByLabel('Search').fill('hello')
    await page.getByRole('link', { name: 'Second post' }).waitFor({ state: 'detached' })
    t.equal(await page.getByRole('link', { name: 'Hello world' }).count(), 1)
    await screenshot(page, 'studio-collection')
    await page.getByRole('link', { name: 'Hello world' }).click()

    // Change fields and Save: the file changes, unknown front matter stays.
    await page.setViewportSize({ width: 1100, height: 900 })
    await page.getByLabel('Short summary').fill('Edited in the Studio')
    await page.getByLabel('Featured').check()
    await page.getByLabel('Status').selectOption('ready')
    await page.getByLabel('Date').fill('2024-05-06')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    let data = await front(s, POST)
    t.equal(data.summary, 'Edited in the Studio')
    t.equal(data.featured, true)
    t.equal(data.status, 'ready')
    t.equal(data.legacy, 'kept by the Studio')
    await screenshot(page, 'studio-entry')

    // A server-side issue is shown next to its field, nothing written.
    await page.getByLabel('Title').fill('')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.locator('#f-title-issue').waitFor()
    t.equal((await front(s, POST)).title, 'Hello world')
    await page.getByLabel('Title').fill('Hello world')

    // A second session changes the entry; Save in the browser conflicts and keeps the typed text.
    const cookie = await s.login()
    const list = await (await s.request('/api/cms/entries?collection=posts&id=hello', { headers: { cookie } })).json() as { entries: Array<{ revision: number, data: Record<string, unknown> }> }
    const other = list.entries[0]!
    const res = await s.request('/api/cms/mutate', {
      method: 'POST',
      headers: writeHeaders(cookie),
      body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'hello', data: { ...other.data, summary: 'From the other session' }, expectedRevision: other.revision })
    })
    t.equal(res.status, 200)
    await page.getByLabel('Short summary').fill('Typed while someone else saved')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText(/changed by someone else/).waitFor()
    t.equal(await page.getByLabel('Short summary').inputValue(), 'Typed while someone else saved')
    t.equal((await front(s, POST)).summary, 'From the other session')
    await screenshot(page, 'studio-conflict')
    await page.getByRole('button', { name: 'Overwrite' }).click()
    await page.getByText('Saved.').waitFor()
    t.equal((await front(s, POST)).summary, 'Typed while someone else saved')

    // History: restore the version from before the overwrite.
    await page.locator('.history summary').first().click()
    await screenshot(page, 'studio-history')
    page.once('dialog', d => { void d.accept() })
    await page.locator('.history li').first().getByRole('button', { name: /Restore/ }).click()
    await page.getByText('Restored.').waitFor()
    t.equal((await front(s, POST)).summary, 'From the other session')
    t.equal(await page.getByLabel('Short summary').inputValue(), 'From the other session')

    // Upload an avatar: the file is stored, the field holds its URL, the preview shows it.
    await page.goto(`${s.url}/admin/cms/authors/ada`)
    await page.getByLabel('Upload Avatar').setInputFiles({ name: 'ada.png', mimeType: 'image/png', buffer: PNG })
    await page.getByText('Uploaded.').waitFor()
    const url = await page.getByLabel('Avatar', { exact: true }).inputValue()
    t.match(url, /^\/uploads\/\d{4}\/\d{2}\/ada-[0-9a-f]{8}\.png$/)
    await page.getByRole('img', { name: 'Avatar preview' }).waitFor()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    const ada = JSON.parse(await readFile(path.join(s.repoDir, 'content/authors/ada.json'), 'utf8')) as { avatar: string }
    t.equal(ada.avatar, url)
    t.same(await readFile(path.join(s.repoDir, 'public', url)), PNG)

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
  })

  t.test('collection page: create, reorder, delete', async t => {
    const config = { collections: { ...CONFIG.collections, notes: { format: 'json' as const, label: 'Notes', orderable: true, schema: { type: 'object', properties: { title: { type: 'string' }, order: { type: 'number' } } } } } }
    const s = await startServer(t, {
      files: { ...FILES, 'content/notes/a.json': '{\n  "title": "Note A",\n  "order": 0\n}\n', 'content/notes/b.json': '{\n  "title": "Note B",\n  "order": 1\n}\n',
        // 26 notes: two pages of 24, so the first row of page 2 has its neighbour on page 1.
        ...Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`content/notes/n${i + 10}.json`, JSON.stringify({ title: `Note ${i + 10}`, order: i + 2 })])) },
      config
    })
    const browser = await launchBrowser(t)
    const page = await newPage(t, browser, 390)
    await signIn(page, s)
    await page.getByRole('link', { name: /Notes/ }).click()
    await page.getByRole('button', { name: 'Move a down' }).click()
    await page.locator('.entries li').first().getByRole('link', { name: 'Note B' }).waitFor()
    const order = async (id: string): Promise<unknown> => (JSON.parse(await readFile(path.join(s.repoDir, `content/notes/${id}.json`), 'utf8')) as { order: unknown }).order
    t.equal(await order('b'), 0)
    t.equal(await order('a'), 1)
    await page.getByRole('button', { name: 'Next page' }).click()
    t.ok(await page.getByRole('button', { name: 'Move n32 up' }).isDisabled(), 'Move up on the first row of page 2 is off')
    await page.getByRole('button', { name: 'Previous page' }).click()

    page.once('dialog', d => { void d.dismiss() })
    await page.getByRole('button', { name: 'Delete a' }).click()
    t.ok(statSync(path.join(s.repoDir, 'content/notes/a.json')).isFile(), 'a dismissed confirm deletes nothing')
    page.once('dialog', d => { void d.accept() })
    await page.getByRole('button', { name: 'Delete a' }).click()
    await page.getByRole('link', { name: 'Note A' }).waitFor({ state: 'detached' })
    t.throws(() => statSync(path.join(s.repoDir, 'content/notes/a.json')), 'the deleted entry has no file')

    await page.getByRole('button', { name: 'New Notes' }).click()
    await page.locator('#new-entry').getByLabel('Title').fill('C')
    await page.getByLabel('Id (file name)').fill('bad:id')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.locator('#new-entry [role=alert]').waitFor()
    t.throws(() => statSync(path.join(s.repoDir, 'content/notes/bad:id.json')), 'a bad id creates nothing')
    await page.getByLabel('Id (file name)').fill('c')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('button', { name: 'Save' }).waitFor()
    t.match(new URL(page.url()).pathname, '/admin/cms/notes/c')
    t.ok(statSync(path.join(s.repoDir, 'content/notes/c.json')).isFile(), 'the new entry has a file')
  })

  t.test('under a permissions policy edits are drafts until Publish', async t => {
    const s = await startServer(t, { files: FILES, config: { ...CONFIG, permissions: { editor: ['*'] } } })
    const browser = await launchBrowser(t)
    const page = await newPage(t, browser)
    await signIn(page, s)
    await page.goto(`${s.url}/admin/cms/posts/second`)
    await page.getByLabel('Title').fill('Second post, revised')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    t.equal((await front(s, 'content/posts/second.md')).title, 'Second post', 'a draft leaves the base file alone')
    await page.locator('h1 .badge', { hasText: 'Draft' }).waitFor()
    await page.getByRole('button', { name: 'Publish' }).click()
    await page.getByText('Published posts/second.').waitFor()
    t.equal((await front(s, 'content/posts/second.md')).title, 'Second post, revised')
    await screenshot(page, 'studio-published')

    // Discard: the draft goes, the base file stays.
    await page.getByLabel('Title').fill('A draft to throw away')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    page.once('dialog', d => { void d.accept() })
    await page.getByRole('button', { name: 'Discard draft' }).click()
    await page.getByText('Draft discarded.').waitFor()
    t.equal(await page.getByLabel('Title').inputValue(), 'Second post, revised')
    t.equal((await front(s, 'content/posts/second.md')).title, 'Second post, revised')

    // A draft of another entry, published from the dashboard with "Publish all drafts".
    await page.goto(`${s.url}/admin/cms/posts/third`)
    await page.getByLabel('Title').fill('Third thing, revised')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    t.equal((await front(s, 'content/posts/third.md')).title, 'Third thing')
    await page.getByRole('link', { name: 'Collections' }).first().click()
    await page.getByText('You have 1 unpublished draft.').waitFor()
    await page.getByRole('button', { name: 'Publish all drafts' }).click()
    await page.getByText('Published posts/third.').waitFor()
    t.equal((await front(s, 'content/posts/third.md')).title, 'Third thing, revised')
  })
}
