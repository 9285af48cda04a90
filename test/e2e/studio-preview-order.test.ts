/**
 * Two Studio behaviours in one browser over one server (a Markdown collection, the site's built
 * folder served on the same origin as with `serve --site`):
 * - `preview.stylesheets`: the body preview is styled by the site's own stylesheet, the Studio's
 *   page is not, and nothing runs inside the preview's frame;
 * - an array of objects reordered with Move up, Move down and drag: the saved file holds the new
 *   order, and when the entry is the editor's draft the draft holds it and the file stays.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import matter from 'gray-matter'
import type { Page } from 'playwright-core'
import { listenOnLoopback, startServer, TEST_PASSWORD, writeHeaders, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, ensureBrowserBundle, screenshot } from '../helpers/browser.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'
import { editorIdForName } from '../../lib/auth/identity.js'
import { siteMiddleware } from '../../lib/http/site-proxy.js'
import { siteFolder } from '../../lib/http/site-proxy.js'

const NAME = 'Ada Reorder'
const SITE_CSS = 'h1, h2 { color: rgb(1, 2, 3); }\nblockquote { border-left: 7px solid rgb(4, 5, 6); }\n'
const ORDERED = '---\ntitle: Ordered\nsections:\n  - heading: Alpha\n    text: a\n  - heading: Beta\n    text: b\n  - heading: Gamma\n    text: c\n---\nThe body.\n'
const CONFIG = {
  preview: { stylesheets: ['/css/site.css'] },
  collections: {
    posts: {
      format: 'md' as const,
      label: 'Posts',
      schema: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          sections: { type: 'array', items: { type: 'object', properties: { heading: { type: 'string' }, text: { type: 'string' } } } },
          body: { type: 'string' }
        }
      }
    }
  }
}

/**
 * Runs in the page: a computed style (or the text) of an element of the preview's frame.
 * @param what `<selector> <property>`, e.g. `h2 color`
 * @returns the value, or null while there is no such element
 */
function styleInPreview (what: string): string | null {
  const [selector, property] = what.split(' ') as [string, string]
  const frame = (globalThis as any).document.querySelector('iframe.md-preview-frame')
  const el = frame?.contentDocument?.querySelector(selector)
  if (el == null) return null
  return property === 'textContent' ? el.textContent : frame.contentWindow.getComputedStyle(el)[property]
}

/**
 * Runs in the page: whether an element of the preview's frame has a computed style (stylesheets load
 * after the frame shows its text).
 * @param arg `what` as for styleInPreview, and the value wanted
 * @returns true once it has
 */
function previewStyleIs ({ what, want }: { what: string, want: string }): boolean {
  const [selector, property] = what.split(' ') as [string, string]
  const frame = (globalThis as any).document.querySelector('iframe.md-preview-frame')
  const el = frame?.contentDocument?.querySelector(selector)
  return el != null && frame.contentWindow.getComputedStyle(el)[property] === want
}

/** @returns the section headings of the form, in the order shown */
async function shownOrder (page: Page): Promise<string[]> {
  return (await page.locator('.object-item .item-toggle').allTextContents()).map(s => s.trim())
}

/** @returns the headings of `sections` in an entry file */
async function fileOrder (s: TestServer, rel: string): Promise<Array<[string, string]>> {
  const data = matter(await readFile(path.join(s.repoDir, rel), 'utf8')).data as { sections: Array<{ heading: string, text: string }> }
  return data.sections.map(x => [x.heading, x.text])
}

/**
 * Drags a section by its handle onto another section's head, with the mouse. The sections are
 * collapsed first, so both are on screen: Chromium takes the drag's source from where the mouse
 * is when it starts moving, and a scroll on the way would make it another item.
 */
async function dragItem (page: Page, from: number, to: number): Promise<void> {
  for (const toggle of await page.locator('.object-item .item-toggle').all()) {
    if (await toggle.getAttribute('aria-expanded') === 'true') await toggle.click()
  }
  await page.locator('.object-item .item-toggle[aria-expanded=true]').first().waitFor({ state: 'detached' })
  await page.locator('.object-item').nth(from).locator('.drag-handle').dragTo(page.locator('.object-item').nth(to).locator('.item-head'))
}

/** Waits until the form shows the sections in this order. */
async function untilShown (page: Page, order: string[]): Promise<void> {
  await page.waitForFunction(want => [...(globalThis as any).document.querySelectorAll('.object-item .item-toggle')].map((b: { textContent: string }) => b.textContent.trim()).join('|') === want, order.join('|'))
}

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('site stylesheets in the preview; reordering object arrays', async t => {
    const s = await startServer(t, {
      config: CONFIG as never,
      files: {
        'content/posts/look.md': '---\ntitle: Look\n---\n## Site look\n\n> Quoted words.\n',
        'content/posts/ordered.md': ORDERED,
        '_site/css/site.css': SITE_CSS,
        '_site/index.html': '<!doctype html><title>Site</title><h1>Home</h1>'
      }
    })
    // The built site on the Studio's origin, after git-cms's own routes (as `serve --site _site`).
    s.cms.app.use(siteMiddleware(s.services, { folder: await siteFolder(path.join(s.repoDir, '_site')) }))
    const { origin } = await listenOnLoopback(t, s.cms.app.callback())
    const browser = await launchBrowser(t)
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
    await page.goto(`${origin}/admin`)
    await page.getByLabel('Password').fill(TEST_PASSWORD)
    await page.getByLabel('Your name').fill(NAME)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()

    await t.test('the body preview uses the site\'s stylesheet, and only the preview', async t => {
      await page.goto(`${origin}/admin/cms/posts/look`)
      const frameElement = page.locator('iframe[title="Body preview"]')
      await frameElement.waitFor()
      t.equal(await frameElement.getAttribute('sandbox'), 'allow-same-origin', 'sandboxed, no scripts')
      await page.waitForFunction(previewStyleIs, { what: 'h2 color', want: 'rgb(1, 2, 3)' })
      t.pass('the preview\'s heading has the site\'s colour')
      t.equal(await page.evaluate(styleInPreview, 'blockquote borderLeft'), '7px solid rgb(4, 5, 6)', 'the site\'s blockquote rule applies')
      const studioH1 = await page.locator('h1').first().evaluate(el => (globalThis as any).getComputedStyle(el).color as string)
      t.not(studioH1, 'rgb(1, 2, 3)', 'the Studio\'s own heading keeps its look')
      // Typing updates the preview in place, still in the site's look.
      await page.getByLabel('Body', { exact: true }).click()
      await page.keyboard.press('Control+End')
      await page.keyboard.type('\n\n## Typed heading\n')
      await page.waitForFunction(styleInPreview, 'h2:nth-of-type(2) textContent')
      t.equal(await page.evaluate(styleInPreview, 'h2:nth-of-type(2) textContent'), 'Typed heading')
      t.equal(await page.evaluate(styleInPreview, 'h2:nth-of-type(2) color'), 'rgb(1, 2, 3)')
      // Whatever reaches the frame, no script runs in it: an inline handler on a broken image.
      await page.evaluate(() => {
        (globalThis as any).document.querySelector('iframe.md-preview-frame').contentDocument.body.insertAdjacentHTML('beforeend',
          '<img id="probe" src="/no-such-image.png" onerror="parent.document.body.setAttribute(\'data-pwned\', \'1\')">')
      })
      await page.waitForFunction(() => (globalThis as any).document.querySelector('iframe.md-preview-frame').contentDocument.getElementById('probe')?.complete === true)
      t.equal(await page.locator('body').getAttribute('data-pwned'), null, 'the handler did not run')
      await screenshot(page, 'studio-site-preview')
    })

    await t.test('Move up, Move down and drag reorder sections; the saved file holds the order', async t => {
      const file = 'content/posts/ordered.md'
      await page.goto(`${origin}/admin/cms/posts/ordered`)
      await untilShown(page, ['Alpha', 'Beta', 'Gamma'])
      await page.getByRole('button', { name: 'Move down: Alpha' }).click()
      await untilShown(page, ['Beta', 'Alpha', 'Gamma'])
      await page.getByRole('button', { name: 'Move up: Gamma' }).click()
      await untilShown(page, ['Beta', 'Gamma', 'Alpha'])
      await dragItem(page, 0, 2)
      await untilShown(page, ['Gamma', 'Alpha', 'Beta'])
      t.same(await shownOrder(page), ['Gamma', 'Alpha', 'Beta'], 'buttons and drag reorder the form')
      t.same(await fileOrder(s, file), [['Alpha', 'a'], ['Beta', 'b'], ['Gamma', 'c']], 'nothing written before Save')
      await page.getByRole('button', { name: 'Save', exact: true }).click()
      await page.getByText('Saved. The site\'s files were written').waitFor()
      t.same(await fileOrder(s, file), [['Gamma', 'c'], ['Alpha', 'a'], ['Beta', 'b']], 'the file holds the new order, each item whole')
      t.equal(matter(await readFile(path.join(s.repoDir, file), 'utf8')).content, 'The body.\n', 'the body is untouched')
    })

    await t.test('in a draft, the reorder goes into the draft and the file stays', async t => {
      const file = 'content/posts/ordered.md'
      const before = await readFile(path.join(s.repoDir, file), 'utf8')
      // An in-place draft of the entry by the same named editor: the Studio then saves into it.
      const login = await s.request('/api/cms/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: TEST_PASSWORD, name: NAME }) })
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      const src = /data-cms-src="([^"]+)"/.exec(renderMarkdown('The body.\n', { collection: 'posts', id: 'ordered' }))?.[1]
      const md = await s.request('/api/cms/mutate', { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'md_block', collection: 'posts', id: 'ordered', blockPath: 'body', src, html: 'The body, drafted.' }) })
      t.equal(md.status, 200, 'an in-place draft')
      await page.reload()
      await page.locator('h1 .badge', { hasText: 'Draft' }).waitFor()
      await untilShown(page, ['Gamma', 'Alpha', 'Beta'])
      await page.getByRole('button', { name: 'Move up: Beta' }).click()
      await untilShown(page, ['Gamma', 'Beta', 'Alpha'])
      await dragItem(page, 2, 0)
      await untilShown(page, ['Alpha', 'Gamma', 'Beta'])
      await page.keyboard.press('Control+s')
      await page.getByText('Saved. Your draft holds the change').waitFor()
      const draft = await s.services.drafts.get(editorIdForName(NAME), 'posts', 'ordered')
      const sections = (draft?.data as { sections?: Array<{ heading: string, text: string }> } | undefined)?.sections ?? []
      t.same(sections.map(x => [x.heading, x.text]), [['Alpha', 'a'], ['Gamma', 'c'], ['Beta', 'b']], 'the draft holds the new order')
      t.equal(await readFile(path.join(s.repoDir, file), 'utf8'), before, 'the file is untouched until Publish')
    })
  })
}
