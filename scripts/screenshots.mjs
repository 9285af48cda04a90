#!/usr/bin/env node
// Makes the README's Studio screenshots by hand (never run by the test suite):
//   npm run build && node scripts/screenshots.mjs
// It copies fixtures-repo/ into a temporary git repository, serves it with bin/git-cms serve on a
// free port, drives /usr/bin/chromium (CHROMIUM_PATH) through playwright-core with the test
// suite's headless flags, and writes
//   docs/screenshots/studio-markdown-editor.png  the CodeMirror body editor, toolbar, live preview
//                                                 showing an image pasted into the body
//   docs/screenshots/restore-offer.png           the Studio's restore offer after a renderer crash
// The temporary repository and the server are removed at the end.
import { spawn, execFileSync } from 'node:child_process'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const OUT = path.join(ROOT, 'docs/screenshots')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const PASSWORD = 'screenshots-only-password'
const IMAGE = path.join(ROOT, 'fixtures-repo/public/uploads/2026/01/harbour-at-dusk-340535e6.png')

if (!existsSync(path.join(ROOT, 'dist/lib/cli.js')) || !existsSync(path.join(ROOT, 'dist/browser/studio.js'))) {
  console.error('screenshots: run npm run build first')
  process.exit(1)
}

const repo = await mkdtemp(path.join(tmpdir(), 'git-cms-screenshots-'))
let server = null
let browser = null
try {
  await cp(path.join(ROOT, 'fixtures-repo'), repo, { recursive: true })
  const git = (...args) => execFileSync('git', ['-c', 'user.name=git-cms', '-c', 'user.email=git-cms@example.invalid', ...args], { cwd: repo, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', 'Example site')

  server = spawn(process.execPath, [path.join(ROOT, 'bin/git-cms'), 'serve', '--repo', repo, '--port', '0'], {
    env: { ...process.env, CMS_EDIT_PASSWORD: PASSWORD, CMS_SESSION_SECRET: 'screenshots-session-secret-0123456789abcdef' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    server.stdout.on('data', chunk => {
      out += chunk
      const m = /git-cms listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve(m[1])
    })
    server.once('exit', code => reject(new Error(`git-cms serve exited with ${code}`)))
  })

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage']
  })
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, deviceScaleFactor: 1 })
  const page = await context.newPage()
  page.on('pageerror', err => { throw err })
  await page.goto(`${url}/admin`)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('heading', { name: 'Collections' }).waitFor()

  // 1. The Markdown editor: a picture pasted on a line of its own after the first paragraph,
  // uploaded, inserted and shown by the live preview (waited for until the image has loaded).
  await page.goto(`${url}/admin/cms/posts/hello-world`)
  const source = page.locator('.md-source .cm-content')
  await source.waitFor()
  // The empty line after the first paragraph (line 4), then a line of its own between blank ones.
  await source.locator('.cm-line').nth(3).click()
  await page.keyboard.press('Enter')
  await page.keyboard.press('Enter')
  await page.keyboard.press('ArrowUp')
  const png = (await readFile(IMAGE)).toString('base64')
  await source.evaluate((el, base64) => {
    const bytes = Uint8Array.from(atob(base64), c => c.charCodeAt(0))
    const data = new DataTransfer()
    data.items.add(new File([bytes], 'harbour at dusk.png', { type: 'image/png' }))
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
  }, png)
  await page.getByText('Uploaded harbour at dusk.png').waitFor()
  await page.waitForFunction(() => {
    const img = document.querySelector('.md-preview img[src*="harbour-at-dusk"]')
    return img !== null && img.complete && img.naturalWidth > 0
  }, undefined, { timeout: 15000 })
  const field = page.locator('.field').filter({ has: page.locator('.md-panes') })
  await field.scrollIntoViewIfNeeded()
  await field.screenshot({ path: path.join(OUT, 'studio-markdown-editor.png') })

  // 2. The restore offer: type into a form, crash the renderer (nothing saved, nothing unloaded),
  // reopen the entry in a new page of the same context.
  const typing = await context.newPage()
  await typing.goto(`${url}/admin/cms/posts/editing-in-place`)
  await typing.getByLabel('Title', { exact: true }).waitFor()
  await typing.getByLabel('Title', { exact: true }).fill('Editing in place, revised on the train')
  await typing.waitForFunction(() => Object.keys(localStorage).some(k => k.startsWith('git-cms:unsaved:') && localStorage.getItem(k).includes('revised on the train')))
  const crashed = new Promise(resolve => typing.once('crash', resolve))
  const cdp = await context.newCDPSession(typing)
  cdp.send('Page.crash').catch(() => {})
  await crashed
  await typing.close()
  await page.goto(`${url}/admin/cms/posts/editing-in-place`)
  const offer = page.locator('section.unsaved')
  await offer.waitFor()
  await page.setViewportSize({ width: 1000, height: 640 })
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: path.join(OUT, 'restore-offer.png') })
  console.log(`screenshots: wrote ${path.relative(ROOT, path.join(OUT, 'studio-markdown-editor.png'))} and ${path.relative(ROOT, path.join(OUT, 'restore-offer.png'))}`)
} finally {
  await browser?.close()
  if (server !== null && server.exitCode === null) {
    const exited = new Promise(resolve => server.once('exit', resolve))
    server.kill('SIGTERM')
    await exited
  }
  await rm(repo, { recursive: true, force: true })
}
