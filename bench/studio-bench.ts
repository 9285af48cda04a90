/**
 * The Studio in Chromium against the built server on the demo site (fixtures-repo): the
 * JavaScript a signed-in editor's dashboard transfers (compressed, cold cache), and the first
 * contentful paint of an entry page on a warm start (server and browser cache warm), median of 5.
 */
import { chromium } from 'playwright-core'
import { rm } from 'node:fs/promises'
import { createDemoRepo } from '../lib/demo/site.js'
import type { BenchContext } from './bench-context.js'
import { BENCH_PASSWORD, spawnCms } from './cms-process.js'
import type { SectionReport } from './report.js'

/** The targets of issue 32. */
export const STUDIO_DASHBOARD_JS_KB = 150
export const STUDIO_ENTRY_FCP_MS = 400
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * Runs the studio section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function studioBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const repo = await createDemoRepo()
  const cms = await spawnCms(repo)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'] })
  try {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
    const page = await context.newPage()
    await page.goto(`${cms.url}/admin`)
    const status = await page.evaluate(async (password) => (await fetch('/api/cms/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })).status, BENCH_PASSWORD)
    if (status !== 200) throw new Error(`sign-in answered ${status}`)

    // Cold: a fresh browser cache (the session cookie is kept).
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.clearBrowserCache')
    let jsBytes = 0
    const js = new Set<string>()
    const types = new Map<string, string>()
    cdp.on('Network.responseReceived', e => { types.set(e.requestId, e.type); if (e.type === 'Script') js.add(e.response.url) })
    cdp.on('Network.loadingFinished', e => { if (types.get(e.requestId) === 'Script') jsBytes += e.encodedDataLength })
    await page.goto(`${cms.url}/admin/cms`, { waitUntil: 'networkidle' })
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    report.atMost('Studio JS transferred, dashboard (cold cache, compressed)', jsBytes / 1024, 'KB', STUDIO_DASHBOARD_JS_KB, `${js.size} files`)

    // Warm: the entry page loaded once, then measured five times.
    const entry = `${cms.url}/admin/cms/posts/hello-world`
    await page.goto(entry, { waitUntil: 'networkidle' })
    const paints: number[] = []
    for (let i = 0; i < 5; i++) {
      await page.goto(entry, { waitUntil: 'load' })
      await page.getByLabel('Title').waitFor()
      // Evaluated as text: this file is compiled without the DOM's types.
      paints.push(await page.evaluate<number>(`new Promise(resolve => new PerformanceObserver(list => {
        const fcp = list.getEntriesByName('first-contentful-paint')[0]
        if (fcp !== undefined) resolve(fcp.startTime)
      }).observe({ type: 'paint', buffered: true }))`))
    }
    paints.sort((a, b) => a - b)
    report.atMost('entry page first contentful paint, warm (median of 5)', paints[2] ?? NaN, 'ms', STUDIO_ENTRY_FCP_MS, `min ${Math.round(paints[0] ?? NaN)} ms, max ${Math.round(paints[4] ?? NaN)} ms`)
  } finally {
    await browser.close()
    await cms.stop()
    await rm(repo, { recursive: true, force: true })
    ctx.log('studio: browser and server stopped')
  }
}
