import t, { type Test } from 'tap'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { startServer, repoFingerprint } from '../helpers/site.js'

const API = '/api/cms'

/** A real 1x1 PNG (signature, IHDR, IDAT, IEND with correct CRCs). */
function tinyPng (): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n
    for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    return c >>> 0
  })
  const crc = (buf: Buffer): number => { let c = 0xffffffff; for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0 }
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const c = Buffer.alloc(4); c.writeUInt32BE(crc(td))
    return Buffer.concat([len, td, c])
  }
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(1, 0); ihdr.writeUInt32BE(1, 4); ihdr[8] = 8; ihdr[9] = 2
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0]))), chunk('IEND', Buffer.alloc(0))])
}

function form (name: string, bytes: Buffer, type = 'application/octet-stream', field = 'file'): FormData {
  const fd = new FormData()
  fd.append(field, new Blob([bytes], { type }), name)
  return fd
}

async function setup (t: Test, config = {}) {
  const s = await startServer(t, { config })
  const cookie = await s.login()
  const upload = async (fd: FormData | string, headers: Record<string, string> = {}): Promise<Response> =>
    await s.request(`${API}/upload`, { method: 'POST', headers: { cookie, 'x-cms-request': '1', ...headers }, body: fd })
  return { s, cookie, upload }
}

async function filesUnder (dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter(e => e.isFile()).map(e => path.join(e.parentPath, e.name))
  } catch { return [] }
}

t.test('a PNG is stored under YYYY/MM with a content-derived name and served with its type and nosniff', async t => {
  const { s, upload } = await setup(t)
  const png = tinyPng()
  const res = await upload(form('My Cat Photo!.png', png, 'text/plain'))
  t.equal(res.status, 200)
  const { url } = await res.json()
  const now = new Date()
  const ym = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`
  t.match(url, new RegExp(`^/uploads/${ym}/my-cat-photo-[0-9a-f]{8}\\.png$`))
  const stored = await readFile(path.join(s.repoDir, 'public', url))
  t.same(stored, png)
  const served = await s.request(url)
  t.equal(served.status, 200)
  t.equal(served.headers.get('content-type'), 'image/png')
  t.equal(served.headers.get('x-content-type-options'), 'nosniff')
  t.same(Buffer.from(await served.arrayBuffer()), png)

  const again = await (await upload(form('my cat photo.png', png))).json()
  t.equal(again.url, url, 'the same bytes give the same URL')
  t.equal((await s.request('/uploads/../cms.config.yaml')).status, 404)
})

t.test('SVG with a script, HTML renamed .png, and unknown bytes are 415 and store nothing', async t => {
  const { s, upload } = await setup(t)
  const fp = await repoFingerprint(s.repoDir)
  const svg = Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
  t.equal((await upload(form('x.svg', svg, 'image/svg+xml'))).status, 415)
  t.equal((await upload(form('x.png', Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>'), 'image/png'))).status, 415)
  t.equal((await upload(form('x.png', Buffer.from('just some text')))).status, 415)
  t.equal(await repoFingerprint(s.repoDir), fp)
  t.same(await filesUnder(path.join(s.repoDir, '.git/cms/uploads-tmp')), [], 'no temp files left')
})

t.test('over uploads.maxBytes is 413 and the partial temp file is removed', async t => {
  const { s, upload } = await setup(t)
  const fp = await repoFingerprint(s.repoDir)
  const big = Buffer.concat([tinyPng(), Buffer.alloc(10 * 1024 * 1024 + 1 - tinyPng().length, 7)])
  t.equal(big.length, 10 * 1024 * 1024 + 1)
  const res = await upload(form('big.png', big))
  t.equal(res.status, 413)
  t.match(await res.json(), { error: String })
  t.equal(await repoFingerprint(s.repoDir), fp)
  t.same(await filesUnder(path.join(s.repoDir, '.git/cms/uploads-tmp')), [], 'partial temp file removed')

  const small = await setup(t, { uploads: { maxBytes: 100 } })
  t.equal((await small.upload(form('p.png', Buffer.concat([tinyPng(), Buffer.alloc(100)])))).status, 413)
})

t.test('wrong part name, two files, non-multipart, missing CSRF header, no session', async t => {
  const { s, cookie, upload } = await setup(t)
  const fp = await repoFingerprint(s.repoDir)
  t.equal((await upload(form('a.png', tinyPng(), 'image/png', 'image'))).status, 400)
  const two = form('a.png', tinyPng()); two.append('file', new Blob([tinyPng()]), 'b.png')
  t.equal((await upload(two)).status, 400)
  t.equal((await upload(JSON.stringify({ file: 'x' }), { 'content-type': 'application/json' })).status, 415)
  t.equal((await s.request(`${API}/upload`, { method: 'POST', headers: { cookie }, body: form('a.png', tinyPng()) })).status, 403)
  t.equal((await s.request(`${API}/upload`, { method: 'POST', headers: { 'x-cms-request': '1' }, body: form('a.png', tinyPng()) })).status, 401)
  t.equal(await repoFingerprint(s.repoDir), fp)
  const st = await stat(path.join(s.repoDir, '.git/cms')).catch(() => null)
  t.ok(st === null || st.isDirectory())
})
