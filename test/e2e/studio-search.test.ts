/**
 * Full-text search in the Studio, in a real browser: typing a word that is only in an entry's
 * body finds the entry, and its row shows the snippet with the word marked (as an element, the
 * excerpt as text: markup in a body is shown, never run).
 */
import t from 'tap'
import { startServer, TEST_PASSWORD } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')
  t.test('a body-only word typed in the search box shows the entry with its snippet', async t => {
    const s = await startServer(t, {
      files: {
        'content/journal/first.md': '---\ntitle: First light\n---\nWe walked down to the old harbour at dawn, when the fishing boats came back with the tide and the gulls followed them in.\n',
        'content/journal/harbour.md': '---\ntitle: Harbour walls\n---\nStones and mortar.\n',
        'content/journal/second.md': '---\ntitle: Second thoughts\n---\n<img src=x onerror="window.hacked=1"> <b>the</b> periwinkle\n',
        'content/journal/third.md': '---\ntitle: Third\n---\nNothing to see.\n'
      },
      config: { collections: { journal: { format: 'md', label: 'Journal' } } }
    })
    const browser = await launchBrowser(t)
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } })
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('link', { name: /Journal/ }).click()
    await page.getByRole('link', { name: 'Third' }).waitFor()

    await page.getByRole('searchbox', { name: 'Search' }).pressSequentially('periwink')
    const rows = page.locator('ul.entries li')
    await page.locator('ul.entries li mark').waitFor()
    t.equal(await rows.count(), 1, 'only the entry whose body holds the word')
    t.equal(await rows.getByRole('link').textContent(), 'Second thoughts')
    const snippet = rows.locator('.snippet')
    t.match(await snippet.textContent(), /^body: …?.*onerror="window\.hacked=1"> <b>the<\/b> periwinkle$/, 'the excerpt as text')
    t.equal(await snippet.locator('mark').textContent(), 'periwinkle', 'the matched word marked')
    t.equal(await snippet.locator('img').count(), 0, 'no markup from the body')
    t.equal(await page.evaluate(() => (globalThis as unknown as { hacked?: number }).hacked), undefined)

    // Another word replaces the results: the title match first (its title is its snippet: not
    // repeated), then the body match with its snippet.
    await page.getByRole('searchbox', { name: 'Search' }).fill('harbour')
    await page.getByRole('link', { name: 'First light' }).waitFor()
    t.same(await rows.getByRole('link').allTextContents(), ['Harbour walls', 'First light'])
    t.equal(await rows.nth(0).locator('.snippet').count(), 0)
    t.equal(await rows.nth(1).locator('mark').textContent(), 'harbour')
    await screenshot(page, 'studio-search')
    await page.getByRole('searchbox', { name: 'Search' }).fill('zzzznothing')
    await page.getByText('Nothing matches “zzzznothing”.').waitFor()
  })
}
