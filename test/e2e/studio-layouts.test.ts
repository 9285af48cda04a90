/**
 * The Studio on a real layout in a real browser: an entry whose id holds a space, an apostrophe
 * and a `/` (a nested Markdown folder) is opened from the list and by its URL, edited and saved;
 * an id with a `/` is created from the collection page.
 */
import t from 'tap'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { startServer, TEST_PASSWORD } from '../helpers/site.js'
import { makeExampleSite } from '../helpers/example-site.js'
import { hasChromium, launchBrowser } from '../helpers/browser.js'

const ENTRY = '2023/what\'s new'
const FILE = 'src/content/blog/2023/what\'s new.md'

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  t.test('open, edit and save an entry whose id has a space, an apostrophe and a /', async t => {
    const repo = await makeExampleSite(t, 'astro', { [FILE]: '---\ntitle: What\'s new\ntags: [news]\n---\nThe news.\n' })
    const s = await startServer(t, {
      repoDir: repo,
      config: {
        collections: {
          blog: {
            folder: 'src/content/blog',
            format: 'md',
            nested: true,
            label: 'Blog',
            schema: { type: 'object', properties: { title: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, body: { type: 'string' } } }
          }
        }
      }
    })
    const browser = await launchBrowser(t)
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()

    await page.getByRole('link', { name: /Blog/ }).click()
    await page.getByRole('link', { name: 'What\'s new' }).click()
    await page.getByLabel('Title').waitFor()
    t.equal(new URL(page.url()).pathname, `/admin/cms/blog/${encodeURIComponent(ENTRY)}`, 'the id is one URL-encoded path segment')
    await page.getByLabel('Title').fill('What\'s new, edited')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    const text = await readFile(path.join(repo, FILE), 'utf8')
    t.match(text, /^---\ntitle: .*What's new, edited.*\n/)
    t.ok(text.endsWith('---\nThe news.\n'), 'the body is kept')

    // The same URL opened directly (a reload) shows the entry.
    await page.goto(`${s.url}/admin/cms/blog/${encodeURIComponent(ENTRY)}`)
    t.equal(await page.getByLabel('Title').inputValue(), 'What\'s new, edited')

    // A new entry in a subfolder, from the collection page.
    await page.goto(`${s.url}/admin/cms/blog`)
    await page.getByRole('button', { name: /^New / }).click()
    const title = page.locator('#new-entry').getByLabel('Title')
    await page.getByLabel('Id (file name)').waitFor()
    if (await title.count() > 0) await title.fill('First of the year')
    await page.getByLabel('Id (file name)').fill('2024/first of the year')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('button', { name: 'Save' }).waitFor()
    t.equal(new URL(page.url()).pathname, `/admin/cms/blog/${encodeURIComponent('2024/first of the year')}`)
    t.ok((await stat(path.join(repo, 'src/content/blog/2024/first of the year.md'))).isFile(), 'written in its folder')

    // An id that escapes is refused in the browser and creates nothing.
    await page.getByRole('link', { name: 'Blog' }).click()
    await page.getByRole('button', { name: /^New / }).click()
    await page.getByLabel('Id (file name)').waitFor()
    if (await title.count() > 0) await title.fill('Outside')
    await page.getByLabel('Id (file name)').fill('../outside')
    await page.getByRole('button', { name: 'Create' }).click()
    await page.locator('#new-entry [role=alert]').first().waitFor()
    t.notOk(await stat(path.join(repo, 'src/content/outside.md')).then(() => true, () => false))
  })
}
