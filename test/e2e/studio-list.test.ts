/**
 * The collection list in a real browser: the columns a collection names in `listFields`, sort
 * buttons heading them (a click sorts ascending, a second click descending, by keyboard too), and
 * the draft filter showing only this editor's drafted entries; at 390 px the columns collapse
 * under each title without sideways scrolling.
 */
import t from 'tap'
import { startServer, TEST_PASSWORD, writeHeaders } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'

const CONFIG = {
  permissions: { editor: ['*' as const] },
  collections: {
    posts: {
      format: 'yaml' as const,
      label: 'Posts',
      listFields: ['date', 'rank'],
      schema: { type: 'object', properties: { title: { type: 'string' }, date: { type: 'string', title: 'Published' }, rank: { type: 'number' } } }
    }
  }
}
const FILES = {
  'content/posts/a.yaml': 'title: Banana\ndate: "2024-03-01"\nrank: 10\n',
  'content/posts/b.yaml': 'title: apple\ndate: "2023-12-31"\nrank: 2\n',
  'content/posts/c.yaml': 'title: Cherry\nrank: 5\n'
}
interface Win { document: { documentElement: { scrollWidth: number } } }

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('columns from listFields, sorting by a header click, and the drafts-only filter', async t => {
    const s = await startServer(t, { files: FILES, config: CONFIG })
    const browser = await launchBrowser(t)
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
    const page = await context.newPage()
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()

    // A draft of this browser's editor (under a policy every edit is one): c gets rank 1.
    const cookie = (await context.cookies()).map(c => `${c.name}=${c.value}`).join('; ')
    const res = await s.request('/api/cms/mutate', { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'c', field: 'rank', value: 1 }) })
    t.equal(res.status, 200)

    await page.goto(`${s.url}/admin/cms/posts`)
    const rows = page.locator('.entries li')
    const titles = async (): Promise<string[]> => await rows.locator('.title-cell a').allTextContents()
    /** Waits until the list shows these titles (the request is asynchronous), then gives them. */
    const shown = async (want: string[]): Promise<string[]> => {
      for (let i = 0; i < 100; i++) {
        const now = await titles()
        if (now.join('|') === want.join('|')) return now
        await page.waitForTimeout(50)
      }
      return await titles()
    }
    await rows.first().waitFor()
    t.same(await titles(), ['Banana', 'apple', 'Cherry'], 'the collection\'s own order first')
    t.same(await rows.first().locator('.col').allTextContents(), ['2024-03-01', '10'], 'the listFields columns')
    t.same(await rows.nth(2).locator('.col').allTextContents(), ['—', '1'], 'a missing value, and the draft\'s value')
    const header = page.getByRole('group', { name: 'Sort entries' })
    t.same(await header.getByRole('button').allTextContents(), ['Title ↕', 'Published ↕', 'Rank ↕'], 'headings from the schema titles')

    await header.getByRole('button', { name: 'Sort by Rank' }).click()
    t.same(await shown(['Cherry', 'apple', 'Banana']), ['Cherry', 'apple', 'Banana'], 'rank ascending, the draft by its own rank')
    t.equal(await header.getByRole('button', { name: 'Sort by Rank, sorted ascending' }).getAttribute('aria-pressed'), 'true')
    await header.getByRole('button', { name: 'Sort by Rank, sorted ascending' }).click()
    t.same(await shown(['Banana', 'apple', 'Cherry']), ['Banana', 'apple', 'Cherry'], 'a second click: descending')
    // By keyboard: focus the Published heading and press Enter.
    await header.getByRole('button', { name: 'Sort by Published' }).focus()
    await page.keyboard.press('Enter')
    t.same(await shown(['apple', 'Banana', 'Cherry']), ['apple', 'Banana', 'Cherry'], 'date ascending, the entry without a date last')
    await header.getByRole('button', { name: 'Sort by Title' }).click()
    t.same(await shown(['apple', 'Banana', 'Cherry']), ['apple', 'Banana', 'Cherry'], 'titles collated, case aside')

    await page.getByLabel('Show').selectOption('only')
    t.same(await shown(['Cherry']), ['Cherry'], 'drafts only')
    t.equal(await rows.first().locator('.badge.draft').count(), 1)
    await page.getByLabel('Show').selectOption('none')
    t.same(await shown(['apple', 'Banana']), ['apple', 'Banana'], 'without my drafts')
    await page.getByLabel('Show').selectOption('all')
    t.same(await shown(['apple', 'Banana', 'Cherry']), ['apple', 'Banana', 'Cherry'], 'all again')
    await screenshot(page, 'studio-list-sorted')

    // 390 px: no sideways scrolling, the values are labelled under each title.
    await page.setViewportSize({ width: 390, height: 800 })
    const width = await page.evaluate(() => (globalThis as unknown as Win).document.documentElement.scrollWidth)
    t.ok(width <= 390, `no sideways scrolling at 390 px (${width})`)
    t.ok(await header.getByRole('button', { name: 'Sort by Rank' }).isVisible(), 'the sort buttons stay')
    await screenshot(page, 'studio-list-390')
    await context.close()
  })
}
