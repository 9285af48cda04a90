#!/usr/bin/env node
/**
 * Makes the Studio screenshots of the README and docs/studio.md by hand (never run by the test
 * suite): `npm run build && node scripts/screenshots-studio.mjs`. It starts `bin/git-cms demo` (a
 * throwaway copy of the example site), signs in as "Maria Ortiz" in headless Chromium
 * (/usr/bin/chromium or CHROMIUM_PATH) with a 1200 px wide window, makes "Sam"'s concurrent edits
 * over the API, and writes docs/screenshots/studio-<name>.png:
 *   search-everywhere  the dashboard's one search box, hits grouped by collection
 *   search             a collection's list searched, a body match with its snippet, "New Posts"
 *   new-entry          "New": title first, the id derived, a taken id answered with a free one
 *   history-words      history "Edited by Sam, …" opened on a word changed far down the body
 *   entry              an entry page: the sticky action bar, relation picker, chips, Markdown
 *   sections           an array of objects: reorderable, one item collapsed
 *   draft-bar          an in-place draft opened, saved with Ctrl+S, the bar sticky while scrolled
 *   conflict-fields    a conflict: both values per field, a choice per field
 *   restore-moved      the unsaved-changes offer after the entry changed meanwhile
 * This machine's Chromium has no emoji font, so the collections' emoji icons are hidden (they
 * would show as empty boxes); bypassCSP only lets that one style tag in.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { startDemo } from './demo-server.mjs'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const OUT = path.join(ROOT, 'docs/screenshots')
const PASSWORD = 'screenshot-password-0123456789'
const WIDTH = 1200

if (!existsSync(path.join(ROOT, 'dist/lib/cli.js')) || !existsSync(path.join(ROOT, 'dist/browser/studio.js'))) {
  console.error('screenshots-studio: run npm run build first')
  process.exit(1)
}
const { renderMarkdown } = await import(path.join(ROOT, 'dist/lib/content/markdown/index.js'))

const { server, url } = await startDemo(PASSWORD)
let browser = null
try {
  /** Signs in over the API; the cookie pair. */
  const login = async name => {
    const res = await fetch(`${url}/api/cms/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD, name }) })
    return (res.headers.get('set-cookie') ?? '').split(';')[0]
  }
  const mutate = async (cookie, body) => {
    const res = await fetch(`${url}/api/cms/mutate`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify(body) })
    if (!res.ok) throw new Error(`${body.type} ${body.id}: ${res.status} ${await res.text()}`)
  }
  const entry = async (cookie, collection, id) => (await (await fetch(`${url}/api/cms/entries?collection=${collection}&id=${id}`, { headers: { cookie } })).json()).entries[0]
  const sam = await login('Sam')
  /** Sam saves some fields of a post over the current version. */
  const samSaves = async (id, fields) => {
    const e = await entry(sam, 'posts', id)
    await mutate(sam, { type: 'put_entry', collection: 'posts', id, data: { ...e.data, ...fields }, expectedRevision: e.revision })
  }

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'] })
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 }, deviceScaleFactor: 1, bypassCSP: true })
  await context.addInitScript(() => {
    addEventListener('DOMContentLoaded', () => {
      const style = document.createElement('style')
      style.textContent = '.card .icon, h1 > span[aria-hidden="true"] { display: none }'
      document.head.append(style)
    })
  })
  const page = await context.newPage()
  page.on('pageerror', err => { throw err })
  const shot = async (name, options = {}) => {
    // Focus moved to the heading after the page change; its ring is not what these pictures show.
    await page.evaluate(() => { if (document.activeElement?.tagName === 'H1') document.activeElement.blur() })
    await page.screenshot({ path: path.join(OUT, `studio-${name}.png`), ...options })
    console.log(`wrote docs/screenshots/studio-${name}.png`)
  }
  /** A screenshot from the top of the page down to the bottom of an element (plus a margin). */
  const shotDownTo = async (name, locator) => {
    await page.evaluate(() => window.scrollTo(0, 0))
    const box = await locator.boundingBox()
    await shot(name, { clip: { x: 0, y: 0, width: WIDTH, height: Math.min(1000, Math.ceil(box.y + box.height + 16)) }, fullPage: true })
  }
  const open = async (id) => {
    await page.goto(`${url}/admin/cms/posts/${id}`)
    await page.getByLabel('Title', { exact: true }).waitFor()
  }

  await page.goto(`${url}/admin`)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByLabel('Your name').fill('Maria Ortiz')
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('heading', { name: 'Collections' }).waitFor()

  await page.getByLabel('Search everything').fill('bakeries')
  await page.locator('.search-group').first().waitFor()
  await shotDownTo('search-everywhere', page.locator('.search-all'))

  await page.goto(`${url}/admin/cms/posts`)
  await page.getByLabel('Search', { exact: true }).fill('static')
  await page.locator('.entries .snippet mark').first().waitFor()
  await shotDownTo('search', page.locator('.list-grid'))

  await page.getByRole('button', { name: 'New Posts' }).click()
  await page.locator('#new-entry').getByLabel('Title').fill('Hello, world')
  await page.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('button', { name: /^Use “hello-world-2”/ }).waitFor()
  await shotDownTo('new-entry', page.locator('#new-entry .field').nth(4))

  // Sam makes a body long, then changes one word near its end: the history shows that word.
  const original = (await entry(sam, 'posts', 'static-sites-in-2026')).data.body
  const long = original + '\n' + 'Bread and sites both need patience and a warm oven. '.repeat(12) + 'The last loaf is rye.\n'
  await samSaves('static-sites-in-2026', { body: long })
  await samSaves('static-sites-in-2026', { body: long.replace('loaf is rye', 'loaf is spelt') })
  await open('static-sites-in-2026')
  await page.locator('.history summary', { hasText: /^Edited by Sam, / }).first().click()
  await page.locator('.history li').first().locator('ins', { hasText: 'spelt' }).waitFor()
  await shotDownTo('history-words', page.locator('.history'))

  await open('static-sites-in-2026')
  await page.locator('.cm-editor').waitFor()
  await shot('entry', { clip: { x: 0, y: 0, width: WIDTH, height: 800 } })

  await page.goto(`${url}/admin/cms/pages/home`)
  await page.getByRole('button', { name: /^Move down/ }).first().waitFor()
  await page.locator('.item-toggle').first().click()
  await page.locator('.item-toggle').first().evaluate(el => el.closest('fieldset').scrollIntoView())
  await page.evaluate(() => window.scrollBy(0, -60))
  await shot('sections')

  // An in-place draft by the same name, then the Studio saves into it; the bar stays while scrolled.
  const maria = await login('Maria Ortiz')
  const hello = await entry(maria, 'posts', 'hello-world')
  const src = /data-cms-src="([^"]+)"/.exec(renderMarkdown(hello.data.body, { collection: 'posts', id: 'hello-world' }))[1]
  await mutate(maria, { type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src, html: 'Welcome to our bakery journal, edited in place.' })
  await open('hello-world')
  await page.getByLabel('Title', { exact: true }).fill('Hello, bakery world')
  await page.keyboard.press('Control+s')
  await page.getByText('Saved. Your draft holds the change').waitFor()
  await page.locator('.field.chips').first().scrollIntoViewIfNeeded()
  await page.evaluate(() => window.scrollBy(0, 300))
  await page.waitForFunction(() => document.querySelector('.action-bar').getBoundingClientRect().top < 40)
  await shot('draft-bar')

  // A conflict: Maria changes title and date while Sam saves title and the image description.
  await open('writing-alt-text')
  await page.getByLabel('Title', { exact: true }).fill('Alt text, my way')
  await page.getByLabel('Publication date').fill('2026-03-03')
  await samSaves('writing-alt-text', { title: 'Alt text, their way', coverAlt: 'A loaf on a wooden board' })
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByRole('heading', { name: 'This entry was changed by someone else' }).waitFor()
  await page.getByRole('group', { name: 'Title' }).getByLabel('Take theirs').check()
  await shotDownTo('conflict-fields', page.locator('.conflict'))

  // Unsaved typing kept by the browser; Sam saves meanwhile; the offer compares both.
  await open('editing-in-place')
  await page.getByLabel('Title', { exact: true }).fill('Editing text where it lives, revised')
  await page.waitForFunction(() => Object.keys(localStorage).some(k => k.startsWith('git-cms:unsaved:') && localStorage.getItem(k).includes('revised')))
  await samSaves('editing-in-place', { title: 'Editing in place, by Sam' })
  await open('editing-in-place')
  await page.locator('section.unsaved .moved').waitFor()
  await shotDownTo('restore-moved', page.locator('section.unsaved'))
} finally {
  await browser?.close()
  server.kill('SIGTERM')
}
