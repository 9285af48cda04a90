/**
 * The Studio's git remote panel in a real browser: a refused push shown in words with "Retry push",
 * which pushes the commit once the host allows it.
 */
import t from 'tap'
import path from 'node:path'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'
import { startRemoteSite, hostRef } from '../helpers/remote-site.js'



if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')
  t.test('a refused push is shown with Retry push, which sends it', async t => {
    const { s, host, as } = await startRemoteSite(t)
    await host.hook('pre-receive', 'echo "branch is protected" >&2\nexit 1')
    const ann = as('ann', 'Ann')
    await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
    const published = await (await ann.post('/publish')).json() as { commit: string, push: { ok: boolean } }
    t.equal(published.push.ok, false)

    const browser = await launchBrowser(t)
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } })
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.setExtraHTTPHeaders({ 'x-user': 'ann', 'x-user-name': 'Ann', 'x-user-roles': 'publisher' })
    await page.goto(`${s.url}/admin`)
    await page.getByRole('heading', { name: 'Git remote' }).waitFor()
    const alert = page.getByText('A publish did not reach the git host')
    await alert.waitFor()
    t.match(await alert.textContent(), /branch is protected/)
    t.match(await page.getByText(/Last fetch from origin\/main/).textContent(), /ago|not yet/)
    await screenshot(page, 'studio-sync-refused')

    await host.hook('pre-receive', null)
    await page.getByRole('button', { name: 'Retry push' }).click()
    await page.getByText(`Pushed ${published.commit.slice(0, 7)} to origin.`).waitFor()
    t.equal(hostRef(host, 'refs/heads/main'), published.commit, 'the host has the commit')
    t.equal(await page.getByRole('button', { name: 'Retry push' }).count(), 0, 'no retry left')
    await screenshot(page, 'studio-sync-pushed')
  })
}
