/**
 * axe-core (its own source injected into the page) on a site page with the in-place editor in
 * Chromium, signed in: once the editor is ready, and while a block is being edited. No critical and
 * no serious violation.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { TEST_PASSWORD } from '../helpers/site.js'
import { startPostSite } from '../helpers/post-site.js'
import { axeSource, severe } from '../helpers/axe.js'
import { hasChromium, launchBrowser, ensureBrowserBundle } from '../helpers/browser.js'

const POST = 'content/posts/inline.md'
const SOURCE = '---\ntitle: Inline editing\n---\n## A heading\n\nThe first paragraph, with a [link](https://example.org/).\n\n- one\n- two\n'

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('editor')

  t.test('axe: 0 critical, 0 serious on a page with the in-place editor', async t => {
    const { site: origin } = await startPostSite(t, POST, SOURCE, 'Inline editing')
    const source = await axeSource()
    const browser = await launchBrowser(t)
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
    t.teardown(async () => { await context.close() })
    t.equal((await context.request.post(`${origin}/api/cms/auth/login`, { data: { password: TEST_PASSWORD } })).status(), 200)
    const page = await context.newPage()
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${origin}/post`)
    await page.locator('.cms-ui .cms-toolbar').waitFor({ state: 'attached' })
    await page.locator('.cms-ui [role=status]').filter({ hasText: /Click any outlined text/ }).waitFor()
    t.same(await severe(page, source), [], 'the editor ready')
    // Editing a block: its toolbar and state shown.
    await page.locator('[data-cms-md] [data-cms-src]').nth(1).click()
    await page.keyboard.press('End')
    await page.keyboard.type(' Typed.')
    await page.locator('[data-cms-md] [data-cms-src]', { hasText: 'Typed.' }).waitFor()
    t.same(await severe(page, source), [], 'a block being edited')
  })
}
