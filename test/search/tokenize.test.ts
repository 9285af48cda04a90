import t from 'tap'
import { foldText, MAX_TERM_LENGTH, termsOf } from '../../lib/search/tokenize.js'

/** The terms of ASCII text as the regular expression the char-code scanner replaced gave them. */
function byRegExp (text: string): string[] {
  const folded = foldText(text)
  const terms: string[] = []
  const re = /[a-z0-9]+/g
  for (let m = re.exec(folded); m !== null; m = re.exec(folded)) terms.push(m[0].length > MAX_TERM_LENGTH ? m[0].slice(0, MAX_TERM_LENGTH) : m[0])
  return terms
}

t.test('ASCII text: the scanner gives the terms the regular expression gave', async t => {
  const samples = [
    '', ' ', 'a', 'A', 'Hello, World!', 'post-00042', '  leading and trailing  ', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33),
    `${'q'.repeat(70)} tail`, 'ends with digit 9', '9', 'a_b-c.d/e\\f', '`code` and *emphasis* [link](http://x.y/z?q=1#h)',
    'tabs\tand\nnewlines\r\nmixed', 'UPPER lower MiXeD 123abc ABC123', '@#$%^&*()', 'a\u0000b', '---\ntitle: T\n---\nbody text\n'
  ]
  // Every printable ASCII character, and random ASCII strings.
  let all = ''
  for (let c = 0; c < 128; c++) all += String.fromCharCode(c)
  samples.push(all, all.split('').reverse().join(''))
  let seed = 7
  const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  for (let i = 0; i < 500; i++) {
    let s = ''
    const len = rand(120)
    for (let j = 0; j < len; j++) s += String.fromCharCode(rand(4) === 0 ? rand(128) : 'aZ0 -.9x'.charCodeAt(rand(8)))
    samples.push(s)
  }
  for (const text of samples) t.same(termsOf(text), byRegExp(text), JSON.stringify(text.slice(0, 40)))
})

t.test('non-ASCII text still splits on Unicode letters and digits, folded', async t => {
  t.same(termsOf('Crème Brûlée, naïve café'), ['creme', 'brulee', 'naive', 'cafe'])
  t.same(termsOf('Straße 42 日本語'), ['straße', '42', '日本語'])
  // A non-ASCII character that folds to ASCII takes the scanner's way and gives the same term.
  t.same(termsOf('\u212Aelvin'), ['kelvin'])
  t.same(termsOf(`é${'a'.repeat(40)}`), [`e${'a'.repeat(MAX_TERM_LENGTH - 1)}`], 'cut at MAX_TERM_LENGTH')
})
