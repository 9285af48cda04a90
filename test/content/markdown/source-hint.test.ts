import t from 'tap'
import { createHash } from 'node:crypto'
import { sourceHash, parseSourceHint } from '../../../lib/content/markdown/index.js'

t.test('sourceHash is the first 16 hex of the SHA-256 of the UTF-8 bytes', async t => {
  for (const s of ['', 'hello', 'Über 😀', 'a\r\nb']) {
    t.equal(sourceHash(s), createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex').slice(0, 16))
  }
  t.not(sourceHash('a'), sourceHash('b'))
  t.match(sourceHash('x'), /^[0-9a-f]{16}$/)
})

t.test('parseSourceHint accepts only well-formed hints', async t => {
  t.same(parseSourceHint('0:5:0123456789abcdef'), { start: 0, end: 5, hash: '0123456789abcdef' })
  t.same(parseSourceHint('12:300:ffffffffffffffff'), { start: 12, end: 300, hash: 'ffffffffffffffff' })
  const bad = [
    '', '5:5:0123456789abcdef', '6:5:0123456789abcdef', '-1:5:0123456789abcdef', '1:-5:0123456789abcdef',
    'a:5:0123456789abcdef', '1.5:5:0123456789abcdef', '1:5:0123456789abcde', '1:5:0123456789abcdef0',
    '1:5:0123456789ABCDEF', '01:5:0123456789abcdef', '+1:5:0123456789abcdef', ' 1:5:0123456789abcdef',
    '1:5:0123456789abcdef ', '1:5', '1:5:0123456789abcdeg', '99999999999999999:999999999999999999:0123456789abcdef',
    '1e3:2000:0123456789abcdef', '0x1:5:0123456789abcdef'
  ]
  for (const s of bad) t.equal(parseSourceHint(s), null, JSON.stringify(s))
})
