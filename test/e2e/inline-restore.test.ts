/**
 * The inline editor keeps a block's unsaved text in the browser. The "crash" is a real renderer
 * crash (CDP `Page.crash`): no blur, pagehide or unload runs, so nothing is saved on the way out
 * and nothing races the reopened page. A new page in the same browser context (same storage)
 * offers "Restore unsaved changes" / "Discard": Discard leaves the file and the draft refs as they
 * were; Restore puts the text back into its block and saves it as an md_block draft; when the
 * entry and the block changed meanwhile the offer says so and shows both texts.
 */
import t, { type Test } from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { repoFingerprint, git, TEST_PASSWORD, type TestServer } from '../helpers/site.js'
import { startPostSite } from '../helpers/post-site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'

const POST = 'content/posts/inline.md'
const SOURCE = '---\ntitle: Inline editing\n---\nThe first paragraph.\n\nThe second paragraph.\n'
const PREFIX = 'git-cms:unsaved-block:v2:'
/** The page globals the callbacks below use (they run in the browser; the tests have no DOM types). */
interface Win { localStorage: { getItem: (k: string) => string | null } }

/** The CMS plus one site page, `/post`, rendered from the base file on every request. */
async function startSite (t: Test): Promise<TestServer & { site: string }> {
  return await startPostSite(t, POST, SOURCE)
}

const block = (page: Page, n: number): ReturnType<Page['locator']> => page.locator('[data-cms-md] [data-cms-src]').nth(n)
const status = (page: Page): ReturnType<Page['locator']> => page.locator('.cms-ui [role=status]')

/** @returns the values of the unsaved-block keys in the page's storage */
async function kept (page: Page): Promise<string[]> {
  return await page.evaluate(prefix => {
    const store = (globalThis as unknown as Win & { localStorage: Record<string, unknown> }).localStorage
    return Object.keys(store).filter(k => k.startsWith(prefix)).map(k => (store as unknown as Win['localStorage']).getItem(k) ?? '')
  }, PREFIX)
}

/** @returns the editor's draft refs (empty before any draft) */
function draftRefs (s: TestServer): string {
  return git(s.repoDir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/cms/drafts/')
}

/** Opens the post in a new page of the context and waits for the editor. */
async function open (t: Test, context: BrowserContext, s: { site: string }): Promise<{ page: Page, mutations: unknown[] }> {
  const page = await context.newPage()
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  const mutations: unknown[] = []
  page.on('request', (r: Request) => { if (r.url().endsWith('/api/cms/mutate')) mutations.push(r.postDataJSON()) })
  await page.goto(`${s.site}/post`)
  await page.locator('.cms-ui .cms-toolbar').waitFor({ state: 'attached' })
  await status(page).filter({ hasText: /Click any outlined text|unsaved text/ }).waitFor()
  return { page, mutations }
}

/**
 * Types into a block, waits until the browser kept it, then crashes the renderer (no blur, no
 * unload: nothing is saved on the way out).
 */
async function typeAndCrash (t: Test, context: BrowserContext, s: { site: string }, n: number, text: string): Promise<void> {
  const { page, mutations } = await open(t, context, s)
  await block(page, n).click()
  await page.keyboard.press('Control+A')
  await page.keyboard.type(text)
  await page.waitForFunction(([prefix, typed]) => {
    const store = (globalThis as unknown as { localStorage: Record<string, string> & Win['localStorage'] }).localStorage
    // Kept with the entry's revision (the editor reads it while the typing starts).
    return Object.keys(store).some(k => k.startsWith(prefix!) && (store.getItem(k) ?? '').includes(typed!) && /"revision":\d/.test(store.getItem(k) ?? ''))
  }, [PREFIX, text])
  t.same(mutations, [], 'nothing was saved while typing')
  const crashed = new Promise(resolve => page.once('crash', resolve))
  const cdp = await context.newCDPSession(page)
  void cdp.send('Page.crash').catch(() => {})
  await crashed
  await page.close()
}

async function signedInContext (t: Test, browser: Browser, s: { site: string }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  t.teardown(async () => { await context.close() })
  t.equal((await context.request.post(`${s.site}/api/cms/auth/login`, { data: { password: TEST_PASSWORD } })).status(), 200)
  return context
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('editor')
  // One browser for the file; each test has a server and a context (storage) of its own.
  const browser = await launchBrowser(t)

  t.test('a block typed into survives a renderer crash: Discard changes nothing, Restore saves it', async t => {
    const s = await startSite(t)
    const context = await signedInContext(t, browser, s)
    const fingerprint = await repoFingerprint(s.repoDir)

    await typeAndCrash(t, context, s, 0, 'Typed before the crash.')
    t.equal(await repoFingerprint(s.repoDir), fingerprint, 'the crash wrote nothing (no draft ref, no file)')

    // Reopen: the offer shows the kept text; the page keeps its own until the editor chooses.
    let { page, mutations } = await open(t, context, s)
    const offer = page.getByRole('region', { name: 'Unsaved changes' })
    await offer.waitFor()
    t.equal(await offer.getByLabel('Your unsaved text').inputValue(), 'Typed before the crash.')
    t.equal(await offer.getByLabel('Now on the page').count(), 0, 'nothing moved: one text')
    t.equal(await block(page, 0).textContent(), 'The first paragraph.', 'never overwritten silently')
    await offer.getByRole('button', { name: 'Discard unsaved changes' }).click()
    await status(page).filter({ hasText: 'Unsaved text discarded.' }).waitFor()
    t.equal(await offer.count(), 0, 'the offer is gone')
    t.same(await kept(page), [], 'the kept text is gone')
    t.same(mutations, [], 'nothing sent')
    t.equal(await readFile(path.join(s.repoDir, POST), 'utf8'), SOURCE, 'the file is as it was')
    t.equal(draftRefs(s), '', 'no draft')
    t.equal(await repoFingerprint(s.repoDir), fingerprint, 'nothing written')
    await page.reload()
    await status(page).filter({ hasText: 'Click any outlined text' }).waitFor()
    t.equal(await page.getByRole('region', { name: 'Unsaved changes' }).count(), 0, 'no offer after Discard')
    await page.close()

    // Crash again; Restore (by keyboard) puts the text back and saves it as a draft.
    await typeAndCrash(t, context, s, 0, 'Typed again before the crash.')
    ;({ page, mutations } = await open(t, context, s))
    await page.getByRole('region', { name: 'Unsaved changes' }).waitFor()
    await screenshot(page, 'inline-restore-offer')
    await page.getByRole('button', { name: 'Restore unsaved changes' }).focus()
    await page.keyboard.press('Enter')
    await status(page).filter({ hasText: 'Draft saved' }).waitFor()
    t.equal(await block(page, 0).textContent(), 'Typed again before the crash.')
    t.equal(mutations.length, 1, 'one md_block save')
    t.match(mutations[0], { type: 'md_block', collection: 'posts', id: 'inline', blockPath: 'body', html: /Typed again before the crash\./ })
    t.same(await kept(page), [], 'a saved block keeps nothing in the browser')
    t.equal(await readFile(path.join(s.repoDir, POST), 'utf8'), SOURCE, 'a draft: the base file is unchanged')
    t.not(draftRefs(s), '', 'the draft ref exists')
    const res = await context.request.get(`${s.site}/api/cms/entries?collection=posts&id=inline`)
    const entry = (await res.json() as { entries: Array<{ draft?: boolean, data: { body: string } }> }).entries[0]
    t.equal(entry?.draft, true)
    t.equal(entry?.data.body, 'Typed again before the crash.\n\nThe second paragraph.\n', 'the draft holds the restored text')
    await page.reload()
    await status(page).filter({ hasText: /Click any outlined text/ }).waitFor()
    t.equal(await page.getByRole('region', { name: 'Unsaved changes' }).count(), 0, 'no offer after the save')
  })

  t.test('when the entry and the block changed since the typing, the offer says so and shows both', async t => {
    const s = await startSite(t)
    const context = await signedInContext(t, browser, s)
    await typeAndCrash(t, context, s, 1, 'My version of the second paragraph.')
    // Someone else changes that paragraph (a git pull, a text editor).
    const elsewhere = SOURCE.replace('The second paragraph.', 'The second paragraph, edited elsewhere.')
    await writeFile(path.join(s.repoDir, POST), elsewhere)
    const fingerprint = await repoFingerprint(s.repoDir)

    const { page, mutations } = await open(t, context, s)
    const offer = page.getByRole('region', { name: 'Unsaved changes' })
    await offer.waitFor()
    t.match(await offer.textContent(), /The entry changed since you typed this \(revision 1 then, 2 now\)\./)
    t.match(await offer.textContent(), /The text of this block changed since you typed this/)
    t.equal(await offer.getByLabel('Your unsaved text').inputValue(), 'My version of the second paragraph.')
    t.equal(await offer.getByLabel('Now on the page').inputValue(), 'The second paragraph, edited elsewhere.')
    t.equal(await block(page, 1).textContent(), 'The second paragraph, edited elsewhere.', 'the page shows the other change')
    await screenshot(page, 'inline-restore-moved')
    await offer.getByRole('button', { name: 'Discard unsaved changes' }).click()
    await status(page).filter({ hasText: 'Unsaved text discarded.' }).waitFor()
    t.same(mutations, [])
    t.same(await kept(page), [])
    t.equal(await readFile(path.join(s.repoDir, POST), 'utf8'), elsewhere, 'the other change stays')
    t.equal(draftRefs(s), '')
    t.equal(await repoFingerprint(s.repoDir), fingerprint)
  })
}
