/**
 * The Studio's languages in a real browser, on a Starlight-shaped docs collection (root locale
 * English, French in its folder): filter the list by locale, see a missing translation on the
 * source entry, "Translate to fr" opens the new entry pre-filled with its source beside it, save,
 * publish (timed, its steps printed), and the new file is at the layout's path with the bytes
 * expected; the draft ref holds it until Publish, which removes the ref and makes no commit. A source committed
 * after its translation marks the translation outdated, in words, on it and in the panel.
 */
import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { git, startServer, TEST_PASSWORD } from '../helpers/site.js'
import { hasChromium, launchBrowser, ensureBrowserBundle } from '../helpers/browser.js'
import { editorTask, refsOf } from '../helpers/studio-task.js'

const CONFIG = {
  permissions: { editor: ['*' as const] },
  collections: {
    docs: { folder: 'src/content/docs', format: 'md' as const, nested: true, label: 'Docs', i18n: { locales: ['en', 'fr'], layout: 'folder' as const, rootLocale: 'en' } }
  }
}
const FILES = {
  'src/content/docs/index.md': '---\ntitle: Welcome\n---\nHello.\n',
  'src/content/docs/fr/index.md': '---\ntitle: Bienvenue\n---\nBonjour.\n',
  'src/content/docs/guides/example.md': '---\ntitle: Example Guide\ndescription: A guide.\n---\nGuides lead a user.\n'
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('filter by locale, translate side by side, save, publish', async t => {
    const s = await startServer(t, { files: FILES, config: CONFIG })
    const browser = await launchBrowser(t)
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage()
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()

    // The English source committed after its French translation: fr/index is outdated.
    await writeFile(path.join(s.repoDir, 'src/content/docs/index.md'), '---\ntitle: Welcome\n---\nHello, reader.\n')
    git(s.repoDir, 'commit', '-q', '-am', 'English source edited')
    await page.goto(`${s.url}/admin/cms/docs/${encodeURIComponent('fr/index')}`)
    const outdated = page.getByRole('heading', { level: 1 }).getByText('Outdated: the en source changed since')
    await outdated.waitFor()
    t.ok(await outdated.isVisible(), 'the translation says it is outdated, in words')
    await page.goto(`${s.url}/admin/cms/docs/index`)
    const sourcePanel = page.getByRole('complementary', { name: 'Translations' })
    await sourcePanel.getByRole('link', { name: 'fr/index' }).waitFor()
    t.equal(await sourcePanel.locator('li', { hasText: 'fr/index' }).getByText('Outdated: the en source changed since').count(), 1, 'the source\'s panel marks the French translation')
    t.equal(await page.getByRole('heading', { level: 1 }).getByText('Outdated').count(), 0, 'the source itself is not outdated')

    await page.goto(`${s.url}/admin/cms/docs`)
    await page.locator('.entries li').first().waitFor()
    t.equal(await page.locator('.entries li').count(), 3, 'all languages listed')
    t.same((await page.locator('.entries .badge.locale').allTextContents()).sort(), ['en', 'en', 'fr'], 'each entry shows its locale')
    await page.getByLabel('Language').selectOption('fr')
    await page.locator('.entries li').nth(1).waitFor({ state: 'detached' })
    t.same(await page.locator('.entries .title-cell a').allTextContents(), ['Bienvenue'], 'the French entries only')

    const tk = editorTask('translate a page')
    const before = refsOf(s.repoDir)
    const file = path.join(s.repoDir, 'src/content/docs/fr/guides/example.md')
    await page.goto(`${s.url}/admin/cms/docs/${encodeURIComponent('guides/example')}`)
    tk.step('open the English page')
    const panel = page.getByRole('complementary', { name: 'Translations' })
    await panel.waitFor()
    t.ok(await panel.getByText('Missing').isVisible(), 'the missing French translation is shown')
    await panel.getByRole('button', { name: 'Translate to fr' }).click()
    await page.waitForURL(/fr%2Fguides%2Fexample$/)
    tk.step('press "Translate to fr"')
    const source = page.getByRole('complementary', { name: 'Source: guides/example' })
    await source.waitFor()
    t.ok(await source.getByText('A guide.').isVisible(), 'the source beside the form')
    const title = page.getByLabel('Title', { exact: false }).first()
    t.equal(await title.inputValue(), 'Example Guide', 'pre-filled from the source')
    await title.fill('Exemple de guide')
    tk.step('translate the title')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    tk.step('press Save')
    // Under the policy the translation is a draft: no file yet, one draft ref more, no commit.
    t.equal(await readFile(file, 'utf8').catch(() => null), null, 'no file before Publish')
    const saved = refsOf(s.repoDir)
    t.equal(saved.drafts.length, before.drafts.length + 1, 'the translation is on the editor\'s draft ref')
    t.match(git(s.repoDir, 'grep', '-l', 'Exemple de guide', saved.drafts.find(r => !before.drafts.includes(r)) as string), /\.json$/, 'the draft ref holds the title')
    t.equal(saved.head, before.head, 'no commit')
    await page.getByRole('button', { name: 'Publish' }).click()
    await page.getByText('Published docs/fr/guides/example.').waitFor()
    tk.step('press Publish')
    tk.done()
    const text = await readFile(file, 'utf8')
    const published = refsOf(s.repoDir)
    t.same(published.drafts, before.drafts, 'the draft ref is gone')
    t.equal(published.head, before.head, 'no commit (git on publish is off)')
    t.equal(text, '---\ntitle: Exemple de guide\ndescription: A guide.\n---\nGuides lead a user.\n', 'the new file at the layout\'s path, with these bytes')
    t.comment(`figure: translated side by side and published to src/content/docs/fr/guides/example.md (${Buffer.byteLength(text)} bytes)`)
  })
}
