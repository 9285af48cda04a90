/**
 * Test helpers for end-to-end tests: Debian's Chromium driven by playwright-core (never a
 * downloaded browser), one browser per test file, screenshots into test/output/screenshots/.
 */
import { mkdir } from 'node:fs/promises'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { fromRoot } from './repo-root.js'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOT_DIR = fromRoot('test/output/screenshots/')

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * Whether a Chromium binary is present (CI installs it; a test file skips itself when absent).
 * @returns true when the browser can be launched
 */
export function hasChromium (): boolean {
  return existsSync(CHROMIUM)
}

/**
 * Launches headless Chromium, closed at teardown.
 * @param t the tap test
 * @param extraArgs further Chromium switches (e.g. host resolver rules)
 * @returns the browser
 */
export async function launchBrowser (t: Teardown, extraArgs: string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', ...extraArgs]
  })
  t.teardown(async () => { await browser.close() })
  return browser
}

/**
 * Saves a full-page screenshot as `test/output/screenshots/<name>.png`.
 * @param page the page
 * @param name file name without extension
 * @returns the file path
 */
export async function screenshot (page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true })
  const file = path.join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}

const ROOT = fromRoot('/')

/**
 * Bundles the browser code (scripts/build-browser.mjs) when a bundle is missing or older than its
 * sources, so one browser test file can run without `npm run build` first.
 * @param part `studio` (lib/browser/studio -> dist/browser/studio.js) or `editor`
 */
export function ensureBrowserBundle (part: 'studio' | 'editor'): void {
  const src = path.join(ROOT, 'lib/browser', part)
  const newest = Math.max(...readdirSync(src).map(f => statSync(path.join(src, f)).mtimeMs))
  let built = 0
  try { built = statSync(path.join(ROOT, 'dist/browser', `${part}.js`)).mtimeMs } catch {}
  if (built < newest) execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-browser.mjs')], { cwd: ROOT })
}
