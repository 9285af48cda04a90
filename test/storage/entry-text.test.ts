import t from 'tap'
import { lstatSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { readTextIfUnchanged } from '../../lib/storage/entry-file.js'
import { signatureOf } from '../../lib/storage/file-signature.js'

// readTextIfUnchanged reads the descriptor it fstat-ed in one read of the size plus a byte (readFileSync
// read until a read returned nothing): the text must be what readFileSync(file, 'utf8') gives, for
// every kind of content.

t.test('the text readFileSync gives, only while the signature matches', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'entry-text-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const contents: Array<[string, Buffer]> = [
    ['ascii', Buffer.from('---\ntitle: A\n---\nBody\n')],
    ['empty', Buffer.alloc(0)],
    ['multi-byte', Buffer.from('---\ntitle: Grüße 東京 🎉\n---\nÉté\n')],
    ['bom', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('title: x\n')])],
    ['invalid utf-8', Buffer.from([0x61, 0xff, 0xfe, 0x62, 0xc3])],
    ['cut multi-byte at the end', Buffer.from('ab\u00e9').subarray(0, 3)],
    ['large', Buffer.from('x'.repeat(300 * 1024) + 'é')]
  ]
  for (const [name, bytes] of contents) {
    const file = path.join(dir, `${name.replace(/\W/g, '-')}.md`)
    await writeFile(file, bytes)
    const sig = signatureOf(lstatSync(file))
    t.equal(await readTextIfUnchanged(file, sig), readFileSync(file, 'utf8'), name)
    t.equal(await readTextIfUnchanged(file, 'other'), null, `${name}: another signature`)
  }
  const target = path.join(dir, 'ascii.md')
  const link = path.join(dir, 'link.md')
  await symlink(target, link)
  const sig = signatureOf(lstatSync(target))
  t.equal(await readTextIfUnchanged(link, sig), readFileSync(target, 'utf8'), 'a link is followed')
  t.equal(await readTextIfUnchanged(path.join(dir, 'missing.md'), sig), null, 'missing')
})
