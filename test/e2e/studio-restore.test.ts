/**
 * Typing survives a crash, in a real browser: what is typed in a Studio form is kept in
 * localStorage; the browser context is closed without saving (the "crash") and a new one with the
 * same storage state reopens the entry. The Studio offers "Restore unsaved changes" / "Discard" and
 * never overwrites silently: Discard leaves the file as it was, Restore fills the form and Save
 * writes it (and clears the storage), and an entry changed meanwhile is said so with both values.
 * The entry's id holds a `/`, spaces and an apostrophe.
 */
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { repoFingerprint, startServer, TEST_PASSWORD, writeHeaders, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'


const ID = "2024/it's a post"
const FILE = `content/posts/${ID}.md`
const ORIGINAL = "---\ntitle: It's a post\nsummary: Before\n---\nThe saved body.\n"
const CONFIG = {
  collections: {
    posts: {
      format: 'md' as const,
      nested: true,
      label: 'Posts',
      schema: {
        type: 'object',
        properties: { title: { type: 'string', minLength: 1 }, summary: { type: 'string', title: 'Short summary' }, body: { type: 'string' } },
        required: ['title']
      }
    }
  }
}
const KEY = `git-cms:unsaved:v1:posts:${encodeURIComponent(ID)}`
type State = Awaited<ReturnType<BrowserContext['storageState']>>
/** The page globals the callbacks below use (they run in the browser; the tests have no DOM types). */
interface Win {
  localStorage: { getItem: (k: string) => string | null }
  document: { activeElement: { textContent: string | null, blur: () => void } | null, documentElement: { scrollWidth: number } }
}


/** @returns the entry as the API has it (revision and data) */
async function apiEntry (s: TestServer, cookie: string): Promise<{ revision: number, data: Record<string, unknown> }> {
  const res = await s.request(`/api/cms/entries?collection=posts&id=${encodeURIComponent(ID)}`, { headers: { cookie } })
  const body = await res.json() as { entries: Array<{ revision: number, data: Record<string, unknown> }> }
  return body.entries[0]!
}

/** @returns a page in a new context with that storage state, failing the test on page errors */
async function open (t: Test, browser: Browser, state: State | undefined, width = 1100): Promise<{ context: BrowserContext, page: Page }> {
  const context = await browser.newContext({ storageState: state, viewport: { width, height: 900 } })
  const page = await context.newPage()
  page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
  return { context, page }
}

/** @returns the stored unsaved record of the entry, as text, or null */
async function stored (page: Page): Promise<string | null> {
  return await page.evaluate(k => (globalThis as unknown as Win).localStorage.getItem(k), KEY)
}

/**
 * Opens the entry, types, waits until the browser kept it, and closes the context without saving.
 * @returns the storage state the closed context left
 */
async function typeAndCrash (t: Test, browser: Browser, s: TestServer, state: State, summary: string, body?: string): Promise<State> {
  const { context, page } = await open(t, browser, state)
  await page.goto(`${s.url}/admin/cms/posts/${encodeURIComponent(ID)}`)
  await page.getByLabel('Short summary').waitFor()
  t.equal(await page.getByRole('heading', { name: 'Unsaved changes' }).count(), 0, 'nothing to restore before typing')
  await page.getByLabel('Short summary').fill(summary)
  if (body !== undefined) await page.getByLabel('Body', { exact: true }).fill(body)
  await page.waitForFunction(([k, text]) => ((globalThis as unknown as Win).localStorage.getItem(k!) ?? '').includes(text!), [KEY, body ?? summary])
  const left = await context.storageState()
  await context.close()
  return left
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('type, crash, reopen: Discard, Restore and Save, and a revision that moved', async t => {
    const s = await startServer(t, { files: { [FILE]: ORIGINAL }, config: CONFIG })
    const cookie = await s.login()
    const browser = await launchBrowser(t)

    // Signed in once; every later context starts from this state (cookie, empty storage).
    const first = await open(t, browser, undefined)
    await first.page.goto(`${s.url}/admin`)
    await first.page.getByLabel('Password').fill(TEST_PASSWORD)
    await first.page.getByLabel('Password').press('Enter')
    await first.page.getByRole('heading', { name: 'Collections' }).waitFor()
    const signedIn = await first.context.storageState()
    await first.context.close()

    // 1. Crash, reopen at 390 px: the offer shows the typed text; the form still holds the saved one.
    const before = await apiEntry(s, cookie)
    const fingerprint = await repoFingerprint(s.repoDir)
    let state = await typeAndCrash(t, browser, s, signedIn, 'Typed before the crash', 'A body typed before the crash.')
    let { context, page } = await open(t, browser, state, 390)
    await page.goto(`${s.url}/admin/cms/posts/${encodeURIComponent(ID)}`)
    const offer = page.locator('section.unsaved')
    await page.getByRole('heading', { name: 'Unsaved changes' }).waitFor()
    t.match(await offer.textContent(), /Typed before the crash/)
    t.match(await offer.textContent(), /A body typed before the crash\./)
    t.match(await page.getByRole('status').filter({ hasText: 'unsaved changes' }).textContent(), /kept unsaved changes/)
    t.equal(await page.getByLabel('Short summary').inputValue(), 'Before', 'nothing is put into the form before the editor chooses')
    // Everything is reachable with Tab.
    const reached = new Set<string>()
    await page.evaluate(() => { (globalThis as unknown as Win).document.activeElement?.blur() })
    for (let i = 0; i < 40 && reached.size < 2; i++) {
      await page.keyboard.press('Tab')
      const name = await page.evaluate(() => (globalThis as unknown as Win).document.activeElement?.textContent ?? '')
      if (name === 'Restore unsaved changes' || name === 'Discard') reached.add(name)
    }
    t.same([...reached].sort(), ['Discard', 'Restore unsaved changes'], 'Tab reaches both choices')
    const width = await page.evaluate(() => (globalThis as unknown as Win).document.documentElement.scrollWidth)
    t.ok(width <= 390, `no sideways scrolling at 390 px (${width})`)
    await screenshot(page, 'studio-restore-offer')

    // Discard: the file, its revision and the repository are as they were; the offer is gone.
    await page.getByRole('button', { name: 'Discard', exact: true }).click()
    await page.getByRole('heading', { name: 'Unsaved changes' }).waitFor({ state: 'detached' })
    await page.getByText('Unsaved changes discarded.').waitFor()
    t.equal(await stored(page), null, 'Discard clears the storage')
    t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), ORIGINAL)
    t.equal((await apiEntry(s, cookie)).revision, before.revision)
    t.equal(await repoFingerprint(s.repoDir), fingerprint)
    await page.reload()
    await page.getByLabel('Short summary').waitFor()
    t.equal(await page.getByRole('heading', { name: 'Unsaved changes' }).count(), 0, 'no offer after Discard')
    await context.close()

    // 2. Crash, reopen, Restore fills the form, Save writes it and clears the storage.
    state = await typeAndCrash(t, browser, s, signedIn, 'Typed again', 'The body typed again.')
    ;({ context, page } = await open(t, browser, state))
    await page.goto(`${s.url}/admin/cms/posts/${encodeURIComponent(ID)}`)
    await page.getByRole('button', { name: 'Restore unsaved changes' }).click()
    await page.getByText('Unsaved changes restored into the form. Save to keep them.').waitFor()
    t.equal(await page.getByLabel('Short summary').inputValue(), 'Typed again')
    t.equal(await page.getByLabel('Body', { exact: true }).textContent(), 'The body typed again.', 'the Markdown editor holds the restored body')
    t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), ORIGINAL, 'Restore alone writes nothing')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    const saved = await readFile(path.join(s.repoDir, FILE), 'utf8')
    t.match(saved, /\nsummary: Typed again\n/)
    t.match(saved, /\n---\nThe body typed again\.\n?$/)
    t.equal(await stored(page), null, 'a successful save clears the storage')
    await page.reload()
    await page.getByLabel('Short summary').waitFor()
    t.equal(await page.getByRole('heading', { name: 'Unsaved changes' }).count(), 0, 'no offer after a save')
    t.equal(await stored(page), null, 'opening a saved entry keeps nothing')
    await context.close()

    // 3. The entry moves while the typed text waits: the offer says so and shows both values.
    state = await typeAndCrash(t, browser, s, signedIn, 'Typed at the old revision')
    const now = await apiEntry(s, cookie)
    const res = await s.request('/api/cms/mutate', {
      method: 'POST',
      headers: writeHeaders(cookie),
      body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: ID, data: { ...now.data, summary: 'Changed in another session' }, expectedRevision: now.revision })
    })
    t.equal(res.status, 200)
    const moved = await apiEntry(s, cookie)
    ;({ context, page } = await open(t, browser, state))
    await page.goto(`${s.url}/admin/cms/posts/${encodeURIComponent(ID)}`)
    await page.getByRole('heading', { name: 'Unsaved changes' }).waitFor()
    const text = await page.locator('section.unsaved').textContent() ?? ''
    t.match(text, `This entry changed since these unsaved changes were made: they were typed at revision ${now.revision}, and the saved entry is now at revision ${moved.revision}.`)
    t.match(text, /Short summary\s*Unsaved: Typed at the old revision\s*Saved now: Changed in another session/)
    t.match(await page.getByRole('status').filter({ hasText: 'unsaved changes' }).textContent(), /entry changed since they were made/)
    t.equal(await page.getByLabel('Short summary').inputValue(), 'Changed in another session', 'the form shows the saved entry until the editor chooses')
    await screenshot(page, 'studio-restore-moved')
    await page.getByRole('button', { name: 'Restore unsaved changes' }).click()
    t.equal(await page.getByLabel('Short summary').inputValue(), 'Typed at the old revision')
    t.match(await readFile(path.join(s.repoDir, FILE), 'utf8'), /summary: Changed in another session/, 'nothing written before Save')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Saved.').waitFor()
    t.match(await readFile(path.join(s.repoDir, FILE), 'utf8'), /summary: Typed at the old revision/)
    t.equal(await stored(page), null)
    await context.close()
  })
}
