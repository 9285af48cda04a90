/**
 * Test helpers for end-to-end tests: Debian's Chromium driven by playwright-core (never a
 * downloaded browser), one browser per test file, screenshots into test/output/screenshots/.
 */
import { mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOT_DIR = fileURLToPath(new URL('../output/screenshots/', import.meta.url))

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
