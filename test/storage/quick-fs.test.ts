import t from 'tap'
import { symlink, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { readText } from '../../lib/storage/quick-fs.js'

t.test('readText gives what readFileSync gives, whatever the size it is told', async t => {
  const dir = t.testdir()
  const texts: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    ascii: Buffer.from('---\ntitle: x\n---\nbody\n'),
    bom: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('---\ntitle: é\n---\n')]),
    invalid: Buffer.from([0x61, 0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0x0a, 0xf0, 0x9f, 0x8e]),
    emoji: Buffer.from('🎉'.repeat(30_000)),
    large: Buffer.from('x'.repeat(300_000))
  }
  for (const [name, bytes] of Object.entries(texts)) {
    const file = path.join(dir, name)
    await writeFile(file, bytes)
    const expected = readFileSync(file, 'utf8')
    for (const size of [bytes.length, 0, Math.floor(bytes.length / 2), bytes.length + 10]) {
      t.equal(await readText(file, size), expected, `${name}, told ${size} of ${bytes.length} bytes`)
    }
  }
  // The buffer kept between reads never leaks the end of an earlier, longer file.
  t.equal(await readText(path.join(dir, 'ascii'), 3), readFileSync(path.join(dir, 'ascii'), 'utf8'))
})

t.test('readText follows links and fails like readFileSync', async t => {
  const dir = t.testdir({ 'a.md': 'hello', sub: {} })
  await symlink(path.join(dir, 'a.md'), path.join(dir, 'link.md'))
  t.equal(await readText(path.join(dir, 'link.md'), 5), 'hello')
  await t.rejects(readText(path.join(dir, 'missing.md'), 5), { code: 'ENOENT' })
  await t.rejects(readText(path.join(dir, 'sub'), 5), { code: 'EISDIR' })
})
