/**
 * In real Chromium, the zero-change path: git-cms with `--proxy` in front of `hugo server` (Debian's
 * hugo, serving test/fixtures/proxy-site/ whose templates mark nothing). Signed out the page loads
 * nothing but bootstrap.js; after signing in on the same origin, the post's body element is marked
 * and its paragraph takes typed text, which a publish writes into the Markdown file.
 */
import t from 'tap'
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Request } from 'playwright-core'
import { openCms } from '../../lib/cms.js'
import { siteMiddleware } from '../../lib/http/site-proxy.js'
import { silentLogger, TEST_PASSWORD, TEST_SECRET } from '../helpers/site.js'
import { ensureBrowserBundle, hasChromium, launchBrowser } from '../helpers/browser.js'
import { buildProxySite, hasHugo, startHugoServer } from '../helpers/proxy-site.js'

if (!hasChromium() || !hasHugo()) {
  t.plan(0, 'Chromium or Debian hugo is not installed')
} else {
  ensureBrowserBundle('editor')
  ensureBrowserBundle('studio')

  t.test('sign in on the proxied origin, then type into a block of the hugo page', async t => {
    const site = await buildProxySite(t)
    const hugo = await startHugoServer(t, site.repoDir, ['--disableLiveReload'])
    const { cms, services } = await openCms({ repoDir: site.repoDir, env: { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET }, logger: silentLogger() })
    cms.app.use(siteMiddleware(services, { proxy: new URL(hugo) }))
    const server = createServer(cms.app.callback())
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)); await cms.close() })
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const file = path.join(site.repoDir, 'content/posts/tide-tables.md')
    const source = await readFile(file, 'utf8')

    const browser = await launchBrowser(t)
    const page = await browser.newPage()
    const requested: string[] = []
    page.on('request', (r: Request) => { requested.push(new URL(r.url()).pathname) })
    await page.goto(`${base}/posts/tide-tables/`)
    await page.waitForLoadState('networkidle')
    t.ok(requested.includes('/__cms/bootstrap.js'), 'signed out: the injected bootstrap loads')
    t.notOk(requested.includes('/__cms/editor.js'), 'signed out: nothing else does')
    t.equal(await page.locator('[data-cms-md]').count(), 0, 'signed out: no element is marked')

    await page.goto(`${base}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Collections' }).waitFor()

    await page.goto(`${base}/posts/tide-tables/`)
    // The editor has aligned the page's blocks with the entry's source (its toolbar shows once editing starts).
    await page.waitForSelector('[data-cms-md][data-cms-alignment]')
    t.equal(await page.locator('div.post-body[data-cms-md="posts/tide-tables#body"]').count(), 1, 'the body element names its entry')
    const block = page.locator('[data-cms-md] [data-cms-src]', { hasText: 'Tide tables list' })
    await block.waitFor()
    await block.click()
    await page.keyboard.press('Control+End')
    await page.keyboard.type(' Inserted')
    const saved = page.waitForResponse(r => r.url().endsWith('/api/cms/mutate'))
    await page.keyboard.press('Control+S')
    t.equal((await saved).status(), 200, 'the block saved as a draft')
    t.equal(await readFile(file, 'utf8'), source, 'the file is unchanged until publish')
    await page.getByRole('toolbar').getByRole('button', { name: 'Publish' }).click()
    await page.locator('.cms-ui [role=status]').filter({ hasText: 'Published 1 entry: posts/tide-tables' }).waitFor()
    t.equal(await readFile(file, 'utf8'), source.replace('plan a crossing.', 'plan a crossing. Inserted'), 'the file differs by the typed word alone')
  })
}
