/**
 * The Studio's media library in a real browser: pages, search, copy URL, delete with the warning
 * that lists referencing entries (by mouse and by keyboard alone), choosing an image for an image
 * field and for the Markdown body at the cursor, and the page at 390 px.
 */
import t, { type Test } from 'tap'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { git, makeSite, startServer, TEST_PASSWORD, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
const HARBOUR = 'public/uploads/2026/01/harbour-at-dusk-340535e6.png'
const MARIA_URL = '/uploads/2026/01/maria-b917fe43.png'

/** The fixtures site plus 26 images in public/uploads/bulk (so the library has two pages). */
async function site (t: Test): Promise<TestServer> {
  const repoDir = await makeSite(t)
  await mkdir(path.join(repoDir, 'public/uploads/bulk'), { recursive: true })
  for (let i = 1; i <= 26; i++) await writeFile(path.join(repoDir, `public/uploads/bulk/bulk-${String(i).padStart(2, '0')}.png`), PNG)
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-q', '-m', 'bulk images')
  return await startServer(t, { repoDir })
}

/** @returns a signed-in page */
async function signedIn (t: Test, browser: Browser, s: TestServer, width = 1100): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url })
  const page = await context.newPage()
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  await page.goto(`${s.url}/admin`)
  await page.getByLabel('Password').fill(TEST_PASSWORD)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('heading', { name: 'Collections' }).waitFor()
  return page
}

async function exists (file: string): Promise<boolean> {
  return await stat(file).then(() => true, () => false)
}

if (!hasChromium()) {
  t.comment('Chromium is not installed at /usr/bin/chromium: the browser test is skipped')
} else {
  ensureBrowserBundle('studio')

  t.test('the library pages, searches, copies a URL and deletes with a warning', async t => {
    const s = await site(t)
    const browser = await launchBrowser(t)
    const page = await signedIn(t, browser, s)
    await page.getByRole('link', { name: 'Media', exact: true }).click()
    await page.getByRole('heading', { name: 'Media library' }).waitFor()
    t.match(page.url(), /\/admin\/cms\/_media$/)
    const files = page.getByRole('list', { name: 'Files' })
    await page.getByText('Page 1 of 2 · 28 files').waitFor()
    t.equal(await files.getByRole('listitem').count(), 24)
    await page.getByRole('button', { name: 'Next page' }).click()
    await page.getByText('Page 2 of 2 · 28 files').waitFor()
    t.equal(await files.getByRole('listitem').count(), 4)

    // Sort by name: the bulk images come first, in order.
    await page.getByLabel('Sort by').selectOption('name-asc')
    await page.getByText('Page 1 of 2 · 28 files').waitFor()
    t.equal(await files.getByRole('listitem').first().locator('.media-name').innerText(), 'bulk-01.png')

    // Search by name.
    await page.getByLabel('Search media').fill('harbour')
    await page.getByText('Page 1 of 1 · 1 file', { exact: true }).waitFor()
    t.equal(await files.getByRole('listitem').count(), 1)
    const thumb = files.locator('img').first()
    await t.resolves(thumb.evaluate((img: { complete: boolean, naturalWidth: number }) => img.complete && img.naturalWidth > 0), 'the thumbnail loads')

    // Copy URL.
    await page.getByRole('button', { name: 'Copy URL of harbour-at-dusk-340535e6.png' }).click()
    await page.getByText('Copied the URL of harbour-at-dusk-340535e6.png').waitFor()
    t.equal(await page.evaluate(async () => await (globalThis as unknown as { navigator: { clipboard: { readText: () => Promise<string> } } }).navigator.clipboard.readText()), '/uploads/2026/01/harbour-at-dusk-340535e6.png')

    // Delete: the warning lists the entry that still shows the image; Cancel keeps the file.
    await page.getByRole('button', { name: 'Delete harbour-at-dusk-340535e6.png' }).click()
    const dialog = page.getByRole('alertdialog', { name: 'Delete harbour-at-dusk-340535e6.png?' })
    await dialog.waitFor()
    t.match(await dialog.innerText(), /still references the file/)
    t.equal(await dialog.getByRole('link', { name: 'posts/editing-in-place' }).count(), 1)
    await screenshot(page, 'studio-media-delete-warning')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    t.ok(await exists(path.join(s.repoDir, HARBOUR)), 'Cancel deletes nothing')
    await page.getByRole('button', { name: 'Delete harbour-at-dusk-340535e6.png' }).click()
    await dialog.getByRole('button', { name: 'Delete anyway' }).click()
    await page.getByText('Deleted harbour-at-dusk-340535e6.png.').waitFor()
    t.notOk(await exists(path.join(s.repoDir, HARBOUR)), 'the file is gone')
    await page.getByText('No file name matches “harbour”.').waitFor()

    // Keyboard only: reach a file's Delete button with Tab, confirm with Enter.
    await page.getByLabel('Search media').fill('bulk-2')
    await page.getByText('Page 1 of 1 · 7 files').waitFor()
    await page.getByLabel('Search media').focus()
    let reached = false
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute: (n: string) => string | null } | null } }).document.activeElement?.getAttribute('aria-label') === 'Delete bulk-20.png')
    }
    t.ok(reached, 'Tab reaches the Delete button of a file')
    await page.keyboard.press('Enter')
    const plain = page.getByRole('alertdialog', { name: 'Delete bulk-20.png?' })
    await plain.waitFor()
    t.match(await plain.innerText(), /No entry references this file/)
    // Focus moves into the warning (once it has rendered): Enter on its first button deletes. An
    // Enter pressed before the focus moved went nowhere on a loaded CI machine.
    await page.waitForFunction(() => (globalThis as unknown as { document: { activeElement: { closest: (s: string) => unknown } | null } }).document.activeElement?.closest('[role="alertdialog"]') != null)
    await page.keyboard.press('Enter')
    await page.getByText('Deleted bulk-20.png.').waitFor()
    t.notOk(await exists(path.join(s.repoDir, 'public/uploads/bulk/bulk-20.png')))
  })

  t.test('choose from the library: an image field and the Markdown body at the cursor', async t => {
    const s = await site(t)
    const browser = await launchBrowser(t)
    const page = await signedIn(t, browser, s)
    await page.goto(`${s.url}/admin/cms/posts/hello-world`)
    const body = page.getByLabel('Body', { exact: true })
    await body.waitFor()

    // The image field.
    await page.getByRole('button', { name: 'Choose Cover image from the media library' }).click()
    const picker = page.getByRole('dialog', { name: /Choose from the media library/ })
    await picker.waitFor()
    await picker.getByLabel('Search media').fill('maria')
    await picker.getByText('Page 1 of 1 · 1 file', { exact: true }).waitFor()
    await screenshot(page, 'studio-media-picker')
    await picker.getByRole('button', { name: 'Insert maria-b917fe43.png' }).click()
    await picker.waitFor({ state: 'detached' })
    t.equal(await page.getByLabel('Cover image', { exact: true }).inputValue(), MARIA_URL)

    // The body: at the cursor (after the first word), by keyboard.
    await body.click()
    await page.keyboard.press('Control+Home')
    for (let i = 0; i < 'Welcome'.length; i++) await page.keyboard.press('ArrowRight')
    await page.getByRole('button', { name: 'Choose image from library' }).click()
    await picker.waitFor()
    await page.keyboard.type('bulk-07')
    await picker.getByText('Page 1 of 1 · 1 file', { exact: true }).waitFor()
    await picker.getByRole('button', { name: 'Insert bulk-07.png' }).focus()
    await page.keyboard.press('Enter')
    await picker.waitFor({ state: 'detached' })
    const text = await body.innerText()
    t.match(text, /^Welcome!\[bulk-07\]\(\/uploads\/bulk\/bulk-07\.png\) to \*\*Field Notes\*\*/, 'inserted at the cursor')
    // Escape closes the picker without inserting anything.
    await page.getByRole('button', { name: 'Choose image from library' }).click()
    await picker.waitFor()
    await page.keyboard.press('Escape')
    await picker.waitFor({ state: 'detached' })
    t.equal(await body.innerText(), text, 'Escape inserts nothing')

    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    const saved = await readFile(path.join(s.repoDir, 'content/posts/hello-world.md'), 'utf8')
    t.match(saved, `cover: ${MARIA_URL}`)
    t.match(saved, /^---\n[^]*\n---\nWelcome!\[bulk-07\]\(\/uploads\/bulk\/bulk-07\.png\) to \*\*Field Notes\*\*, the journal/)
  })

  t.test('usable at 390 px', async t => {
    const s = await site(t)
    const browser = await launchBrowser(t)
    const page = await signedIn(t, browser, s, 390)
    await page.goto(`${s.url}/admin/cms/_media`)
    await page.getByText('Page 1 of 2 · 28 files').waitFor()
    const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    t.ok(width <= 390, `no horizontal scrolling (${width} px)`)
    for (const name of ['Search media', 'Folder', 'Sort by', 'Size']) {
      const box = await page.getByLabel(name).boundingBox()
      t.ok(box !== null && box.x >= 0 && box.x + box.width <= 390, `${name} fits`)
    }
    const del = page.getByRole('list', { name: 'Files' }).getByRole('listitem').first().getByRole('button', { name: /^Delete / })
    await del.scrollIntoViewIfNeeded()
    const box = await del.boundingBox()
    t.ok(box !== null && box.x + box.width <= 390, 'a card\'s buttons fit')
    await screenshot(page, 'studio-media-390')

    await page.goto(`${s.url}/admin/cms/posts/hello-world`)
    await page.getByRole('button', { name: 'Choose Cover image from the media library' }).click()
    const picker = page.getByRole('dialog', { name: /Choose from the media library/ })
    await picker.waitFor()
    const pbox = await picker.boundingBox()
    t.ok(pbox !== null && pbox.x >= 0 && pbox.x + pbox.width <= 390, 'the picker fits')
  })
}
