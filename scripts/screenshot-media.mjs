#!/usr/bin/env node
/**
 * Makes docs/screenshots/media-library.png by hand (not part of the test suite): starts
 * `bin/git-cms demo` (a throwaway copy of the example site), uploads a few generated images through
 * the API like an editor would, signs in to the Studio in headless Chromium and photographs the
 * media library. Run `npm run build` first. Chromium: /usr/bin/chromium or CHROMIUM_PATH.
 */
import { crc32, deflateSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { startDemo } from './demo-server.mjs'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const OUT = path.join(ROOT, 'docs/screenshots/media-library.png')
const PASSWORD = 'screenshot-password-0123456789'

/** A w x h PNG: a vertical gradient between two colours with a darker band (a "horizon"). */
function png (w, h, top, bottom) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const c = Buffer.alloc(4); c.writeUInt32BE(crc32(td))
    return Buffer.concat([len, td, c])
  }
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2
  const rows = []
  for (let y = 0; y < h; y++) {
    const f = y / (h - 1)
    const band = Math.abs(y - h * 0.62) < h * 0.04 ? 0.7 : 1
    const rgb = top.map((c, i) => Math.round((c + (bottom[i] - c) * f) * band))
    const row = Buffer.alloc(1 + w * 3)
    for (let x = 0; x < w; x++) row.set(rgb, 1 + x * 3)
    rows.push(row)
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))])
}

const IMAGES = [
  ['Lighthouse at dawn.png', [250, 200, 150], [40, 70, 120]],
  ['Bakery window.png', [255, 236, 200], [160, 90, 50]],
  ['Bike shop team.png', [180, 220, 200], [30, 90, 70]],
  ['Library reading room.png', [230, 220, 250], [70, 50, 110]],
  ['Autumn market.png', [255, 210, 120], [150, 60, 30]],
  ['Snow on the hills.png', [240, 245, 255], [120, 140, 170]]
]

const { server, url } = await startDemo(PASSWORD)
try {
  const login = await fetch(`${url}/api/cms/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) })
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
  for (const [name, top, bottom] of IMAGES) {
    const form = new FormData()
    form.append('file', new Blob([png(480, 320, top, bottom)], { type: 'image/png' }), name)
    const res = await fetch(`${url}/api/cms/upload`, { method: 'POST', headers: { cookie, 'x-cms-request': '1' }, body: form })
    if (!res.ok) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`)
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    await page.goto(`${url}/admin`)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    await page.getByRole('link', { name: 'Media', exact: true }).click()
    await page.getByText(/Page 1 of 1 · 8 files/).waitFor()
    await page.waitForFunction(() => [...document.images].every(i => i.complete))
    await page.screenshot({ path: OUT, fullPage: true })
    console.log(`wrote ${path.relative(ROOT, OUT)}`)
  } finally {
    await browser.close()
  }
} finally {
  server.kill('SIGTERM')
}
