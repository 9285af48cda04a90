import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { readFlatYaml } from '../../lib/content/flat-yaml.js'
import { parseYamlText, MAX_YAML_LENGTH } from '../../lib/content/yaml-text.js'
import { parseEntry, parseMarkdown, EntryParseError } from '../../lib/content/formats.js'
import { splitMarkdown } from '../../lib/content/frontmatter.js'
import { EXAMPLE_SITES_DIR } from '../helpers/example-site.js'
import { walkFiles } from '../helpers/site-entries.js'

/** Same values, same key order at every level, same prototypes (NaN and -0 included). */
function same (a: unknown, b: unknown): boolean {
  if (!isDeepStrictEqual(a, b)) return false
  if (a === null || typeof a !== 'object') return true
  const ka = Object.keys(a)
  if (ka.join('\u0000') !== Object.keys(b as object).join('\u0000')) return false
  return ka.every(k => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

/** A text as a test name (ASCII: TAP output breaks on line separators). */
function named (text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** What the full parser gives, or the error it throws. */
function full (text: string): { value: unknown } | { error: string } {
  try { return { value: parseYamlText(text) } } catch (err) { return { error: (err as Error).message } }
}

/**
 * The property every text must have: the flat reader declines, or it gives exactly what the full
 * parser gives (and the full parser does not refuse the text).
 */
function check (text: string): 'taken' | 'declined' | string {
  const flat = readFlatYaml(text)
  if (flat === undefined) return 'declined'
  const expected = full(text)
  if ('error' in expected) return `the full parser refuses it (${expected.error}), the flat reader gave ${JSON.stringify(flat)}`
  if (!same(flat, expected.value)) return `flat ${JSON.stringify(flat)} != full ${JSON.stringify(expected.value)}`
  return 'taken'
}

t.test('the shapes most frontmatter has are read without the full parser, with the same values', async t => {
  const taken = [
    "title: drivin dane nene 0\ndate: '2020-01-01'\ntags:\n  - wenso\n  - phtes\n",
    'title: Hello, world [draft] {x}\ndate: 2020-01-01\ndraft: false\nweight: 10\nratio: 1.5\n',
    'tags: [a, b, "c d", \'e\']\ncategories: []\nlayout: post\n',
    'tags:\n- zero\n- indent\nnext: 1\n',
    '# a comment\n\ntitle: "Quoted: with # and \'"\nauthor: \'Zoë O\'\'Brien\'\nurl: http://example.com/a#b\nlang: C#\n',
    'a: ~\nb: null\nc: NULL\nd:\ne: True\nf: FALSE\ng: 0o17\nh: 0x1F\ni: 017\nj: 1e3\nk: .5\nl: 5.\nm: -.inf\nn: .NaN\no: +12\np: 1_000\nq: 12:30\nr: yes\ns: 1.0\nt: 123456789012345678901234567890\n',
    'title: Emoji 🎉 ok\nconstructor: x\ntoString: y\nvalue_of.x-y: z\n',
    'list:\n  -  spaced\n\n  - "quoted # x"\n  # a comment inside\n  - 3\nafter: ok\n',
    'title: trailing spaces   \nempty_quoted: ""\nsingle: \'\'\n',
    'title: Windows\r\ntags:\r\n  - a\r\n  - b\r\n',
    'description: >-\n  A long folded\n  description: with # and "quotes"\nnext: 1\n',
    'literal: |\n    line one\n    - line two\n# a comment\nfolded: >\n  a\n  b\nstrip: |-\n  x\r\n'
  ]
  for (const text of taken) t.equal(check(text), 'taken', named(text))
})

t.test('anything outside the flat shape is declined (and read by the full parser as before)', async t => {
  const declined = [
    'a: &x [1, 2]\nb: *x\n', // anchors and aliases
    'a: !!str 1\n', 'a: !custom x\n', // tags
    'base: 1\n<<: {x: 1}\n', // merge key
    'a: |+\n  keep\n', 'a: |2\n  indicator\n', 'a: > # c\n  x\n', 'a: |\n  x\n\n  y\n', 'a: |\n  x\n\nb: 1\n', // block scalars beyond the simple
    'a: >\n  x\n    more\n', 'a: |\n  x \n', 'a: |\n  x', 'a: |\nb: 1\n', 'a: |\n', // (more indented, trailing space, no final break, empty)
    'a:\n  b: 1\n', // nested mapping
    'a: multi\n  line plain\n', // multi-line plain scalar
    'a: "esc\\n"\n', 'a: "two\n  lines"\n', // escapes, multi-line quotes
    'a: b # comment\n', 'a: [x, y] # c\n', // comments after values
    'a: 1\rb: 2\n', 'a:\tb\n', // a CR alone, tab
    'a: 1\na: 2\n', // duplicate key (the full parser refuses it)
    'true: 1\n', 'null: 1\n', 'Null: x\n', // keys that are not strings
    '__proto__: {polluted: 1}\n', '__proto__: x\n', // prototype
    '"quoted key": 1\n', 'my key: 1\n', '? complex\n: key\n', // other keys
    '---\na: 1\n', '%YAML 1.2\n---\na: 1\n', '...\n', // document markers and directives
    'a: [x, [y]]\n', 'a: [x, ]\n', 'a: [x,]\n', 'a: [ ]\n', 'a: [x: y]\n', "a: ['it''s']\n", // flow lists beyond the simple
    'a: {x: 1}\n', 'a: - x\n', 'a: @x\n', 'a: %x\n', 'a: `x`\n', 'a: ?x\n', 'a: :x\n', // indicators
    'a: b: c\n', 'a: b:\n', // mapping in a value
    '  a: 1\n  b: 2\n', // indented mapping
    '- a\n- b\n', 'just a scalar\n', '', '# only a comment\n', // not a mapping
    'a:\n  - x\n    - y\n', 'a:\n  - x\n   b: 1\n', 'a:\n  -\n', 'a:\n  - [x]\n', 'a:\n  - b: 1\n', 'a:\n  -x\n', // lists beyond the simple
    'a: x\u0085y\n', 'a: x\u2028y\n', 'a: \ufeffx\n', 'a: x\u0000\n' // characters the full parser decides about
  ]
  for (const text of declined) t.equal(readFlatYaml(text), undefined, named(text))
})

t.test('a prototype key never reaches the prototype, and the bounds hold', async t => {
  const data = parseMarkdown('---\n__proto__:\n  polluted: 1\ntitle: x\n---\nbody').data
  t.equal(Object.getPrototypeOf(data), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(readFlatYaml('a: ' + 'x'.repeat(MAX_YAML_LENGTH) + '\n'), undefined, 'longer than the YAML bound: declined')
  t.throws(() => parseEntry('yaml', 'a: ' + 'x'.repeat(MAX_YAML_LENGTH) + '\n'), EntryParseError, 'and refused by the full parser as before')
  // Long lines of the characters the reader scans for stay linear.
  const started = Date.now()
  for (const s of [' #'.repeat(200_000), ': '.repeat(200_000), "''".repeat(200_000), '[a, '.repeat(100_000) + ']', 'a, '.repeat(200_000)]) {
    readFlatYaml(`k: ${s}\n`)
    readFlatYaml(`k: [${s}]\n`)
    readFlatYaml(`k:\n  - ${s}\n`)
  }
  t.ok(Date.now() - started < 2000, `pathological lines read in ${Date.now() - started} ms`)
})

t.test('generated frontmatter: the flat reader declines or agrees with the full parser', async t => {
  // Scalars that resolve differently under YAML 1.1, JSON and YAML 1.2 core, quoted and not.
  const scalars = ['x', 'two words', 'null', '~', 'Null', 'TRUE', 'True', 'tRue', 'yes', 'no', 'on', 'y', '0', '-0', '+0', '007', '0o17', '0o8', '0x1f', '0X1F', '0b11',
    '1_000', '1e3', '1E3', '1e+3', '.5', '5.', '5.0', '1.50', '.inf', '-.Inf', '+.INF', '.nan', '.NaN', '.NAN', 'nan', 'inf', '12:30', '12:30:45', '2020-01-01', '2020-01-01 10:15:00 +0100',
    '2020-01-01T10:15:00Z', '9007199254740993', '1.7976931348623157e309', 'a#b', 'a #b', 'a: b', 'a:b', 'a:', 'a,b', '[a]', '{a}', '*a', '&a', '!a', '|', '>', '%a', '@a', '`a`', '-a', '- a', '?a', ':a',
    'ok!', "it's", 'say "hi"', 'back\\slash', 'ünï ©', '🎉', '...', '---', '\'q\'', '"q"', "'it''s'", '"a # b"', "'a: b'", '""', "''", ' lead', 'trail ']
  let seed = 18
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const pick = (): string => scalars[random(scalars.length)] as string
  const value = (): string => {
    const kind = random(6)
    if (kind === 0) return `[${Array.from({ length: random(4) }, pick).join(random(2) === 0 ? ', ' : ',')}]`
    if (kind === 1) return ''
    return pick()
  }
  const keys = ['title', 'date', 'tags', 'draft', 'weight', 'x', 'true', 'null', 'a.b', 'a-b', '_c', 'constructor']
  const outcomes: Record<string, number> = { taken: 0, declined: 0 }
  for (let n = 0; n < 3000; n++) {
    const lines: string[] = []
    const count = 1 + random(5)
    for (let k = 0; k < count; k++) {
      const key = keys[random(keys.length)] as string
      const v = value()
      if (random(8) === 0) lines.push('# comment')
      if (random(8) === 0) lines.push('')
      if (v === '' && random(2) === 0) {
        lines.push(`${key}:`)
        const indent = ' '.repeat([0, 2, 4][random(3)] as number)
        for (let i = 0, m = random(4); i < m; i++) lines.push(`${indent}-${random(4) === 0 ? '  ' : ' '}${pick()}`)
      } else {
        lines.push(`${key}:${random(6) === 0 ? '   ' : ' '}${v}`.trimEnd() + (random(10) === 0 ? '  ' : ''))
      }
    }
    const text = lines.join('\n') + '\n'
    const outcome = check(text)
    if (outcome !== 'taken' && outcome !== 'declined') t.fail(`${named(text)}: ${outcome}`)
    const kind = outcome === 'taken' ? 'taken' : 'declined'
    outcomes[kind] = (outcomes[kind] ?? 0) + 1
  }
  t.ok((outcomes.taken ?? 0) > 600, `the flat reader took ${outcomes.taken} of 3,000 generated texts`)
  t.ok((outcomes.declined ?? 0) > 600, `and declined ${outcomes.declined}`)
})

t.test('the example sites and test corpora read the same both ways', async t => {
  let files = 0
  let taken = 0
  for (const rel of await walkFiles(EXAMPLE_SITES_DIR)) {
    const ext = path.extname(rel)
    const text = await readFile(path.join(EXAMPLE_SITES_DIR, rel), 'utf8')
    let yamlText: string | null = null
    if (ext === '.yml' || ext === '.yaml') yamlText = text
    else if (ext === '.md' || ext === '.mdx' || ext === '.markdown') {
      try {
        const parts = splitMarkdown(text)
        if (parts.kind === 'yaml') yamlText = parts.inner
      } catch {}
    }
    if (yamlText === null) continue
    files++
    const outcome = check(yamlText)
    if (outcome === 'taken') taken++
    else t.equal(outcome, 'declined', rel)
  }
  t.ok(files >= 20, `${files} YAML texts compared, ${taken} read flat`)
  t.ok(taken >= 5, 'some of them in the flat shape')
})
