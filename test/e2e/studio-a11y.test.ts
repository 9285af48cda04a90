/**
 * axe-core (its own source injected into the page) on the Studio in Chromium, on the demo site:
 * sign-in, the dashboard with a search, a list searched and with the New form, entry pages with
 * every field kind (relation, chips, reorderable objects, Markdown, image, date, enum, number,
 * boolean) with a conflict shown and the history open on a word diff, and the media library as a
 * page and as a dialog: no critical and no serious violation.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { startServer, TEST_PASSWORD, writeHeaders } from '../helpers/site.js'
import { axeSource, severe } from '../helpers/axe.js'
import { hasChromium, launchBrowser, ensureBrowserBundle, screenshot } from '../helpers/browser.js'


if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('axe: 0 critical, 0 serious on every Studio page', async t => {
    const source = await axeSource()
    const s = await startServer(t)
    const browser = await launchBrowser(t)
    // The Studio's CSP forbids inline scripts; the injected axe source is the test's, not the page's.
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, bypassCSP: true })
    const page = await context.newPage()
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    const check = async (what: string): Promise<void> => {
      const found = await severe(page, source)
      t.same(found, [], what)
    }

    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').waitFor()
    await check('sign-in')
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Your name').fill('Ada')
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    await page.getByLabel('Search everything').fill('bakeries')
    await page.locator('.search-group').first().waitFor()
    await screenshot(page, 'studio-search-everywhere')
    await check('dashboard with search results')

    await page.goto(`${s.url}/admin/cms/posts`)
    await page.getByRole('link', { name: 'Hello, world' }).waitFor()
    await page.getByLabel('Search', { exact: true }).fill('harbour')
    await page.locator('.entries .snippet mark').first().waitFor()
    await check('a list searched, with snippets')
    await page.getByRole('button', { name: 'New Posts' }).click()
    await page.locator('#new-entry').getByLabel('Title').waitFor()
    await check('a list with the New form')

    // Objects in an array: reorderable and collapsible items.
    await page.goto(`${s.url}/admin/cms/pages/home`)
    await page.getByRole('button', { name: /^Move down/ }).first().waitFor()
    await page.locator('.item-toggle').first().click()
    await screenshot(page, 'studio-sections')
    await check('an entry with reorderable sections, one collapsed')

    // A post: relation, chips, Markdown body, image, date, boolean; a conflict shown, history open.
    // One earlier version that differs (the history shows a word diff), then someone else's save
    // while the page is open (the conflict).
    const cookie = await s.login()
    const put = async (fields: Record<string, unknown>): Promise<void> => {
      const cur = await (await s.request('/api/cms/entries?collection=posts&id=editing-in-place', { headers: { cookie } })).json() as { entries: Array<{ revision: number, data: Record<string, unknown> }> }
      const e = cur.entries[0]!
      t.equal((await s.request('/api/cms/mutate', { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'editing-in-place', data: { ...e.data, ...fields }, expectedRevision: e.revision }) })).status, 200)
    }
    await put({ coverAlt: 'A harbour wall at dusk' })
    await page.goto(`${s.url}/admin/cms/posts/editing-in-place`)
    await page.getByLabel('Title').waitFor()
    await page.locator('.cm-editor').waitFor()
    await put({ title: 'Someone else' })
    await page.getByLabel('Title').fill('Mine')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('group', { name: 'Title' }).getByText('Someone else').waitFor()
    await page.locator('.history summary', { hasText: /^Edited by / }).last().click()
    await page.locator('.history li .word-diff').first().waitFor()
    await screenshot(page, 'studio-entry-all-fields')
    await check('an entry with every field kind, a conflict and the history open')

    await page.goto(`${s.url}/admin/cms/_media`)
    await page.locator('.media-card').first().waitFor()
    await check('the media library')
    // The library as a dialog from an image field, and the Markdown editor's toolbar.
    await page.goto(`${s.url}/admin/cms/posts/hello-world`)
    await page.getByRole('button', { name: 'Choose Cover image from the media library' }).click()
    await page.getByRole('dialog').locator('.media-card').first().waitFor()
    await check('the media library as a dialog')
  })
}
