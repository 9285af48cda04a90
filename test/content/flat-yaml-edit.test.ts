import t from 'tap'
import { editFlatYaml } from '../../lib/content/flat-yaml-edit.js'
import { readFlatYaml } from '../../lib/content/flat-yaml.js'
import { editYamlText, parseYamlText } from '../../lib/content/yaml-text.js'
import { parseEntry, serializeEntry } from '../../lib/content/formats.js'

/** Flat texts as sites write them: plain, single- and double-quoted titles, lists, block scalars, CR LF. */
const TEXTS = [
  'title: Old words\ndate: \'2024-01-02\'\ntags:\n  - a\n  - b\n',
  "title: 'Old words'\nsummary: \"A summary\"\n",
  'title: "Old words"\ncount: 3\n',
  'title:    Spaced out   \nnote: x\n',
  'note: first\ntitle: Last key\n',
  'title: Old\r\ndraft: false\r\n',
  'title: Old\nbody_text: |\n  title: not a key\n  more\nafter: y\n',
  'title: Old\ntags: [a, b]\nsubtitle: Sub\n',
  'title: Old'
]

const VALUES = ['New title', 'a', 'Version 2.0 of it', 'x_y-z.', 'two  spaces', 'e1', 'Nullable', 'yesterday']

t.test('a plain-safe string over a string value: byte for byte what editYamlText writes', async t => {
  for (const text of TEXTS) {
    const before = readFlatYaml(text)
    t.ok(before, `flat: ${JSON.stringify(text)}`)
    if (before === undefined) continue
    // (A block scalar's value spans lines: declined, see below.)
    for (const key of Object.keys(before).filter(k => typeof before[k] === 'string' && !(before[k] as string).includes('\n'))) {
      for (const value of VALUES) {
        const after = { ...before, [key]: value }
        const flat = editFlatYaml(text, before, after)
        t.equal(flat, editYamlText(text, before, after), `${JSON.stringify(text)} ${key}=${value}`)
        t.same(parseYamlText(flat ?? ''), after)
      }
    }
  }
})

t.test('what it does not make is declined (undefined), never written differently', async t => {
  const text = 'title: Old\ncount: 3\ntags:\n  - a\nlead: |\n  text\n  more\n'
  const before = readFlatYaml(text)!
  t.ok(before)
  const declined: Array<[string, unknown]> = [
    ['quoting needed', { ...before, title: 'a: b' }],
    ['a YAML word', { ...before, title: 'null' }],
    ['a YAML 1.1 word', { ...before, title: 'yes' }],
    ['a number-like string', { ...before, title: '12' }],
    ['an empty string', { ...before, title: '' }],
    ['a non-string value', { ...before, title: 5 }],
    ['a number replaced', { ...before, count: 'four' }],
    ['a list item', { ...before, tags: ['b'] }],
    ['a block scalar', { ...before, lead: 'New lead' }],
    ['a key added', { ...before, extra: 'Value' }],
    ['a key removed', { title: 'Old', count: 3, tags: ['a'] }],
    ['a prototype key', JSON.parse('{"title":"Old","count":3,"tags":["a"],"lead":"text\\nmore\\n","__proto__":"x"}')],
    ['not an object', ['x']]
  ]
  for (const [what, after] of declined) t.equal(editFlatYaml(text, before, after), undefined, what)
  t.equal(editFlatYaml(text, before, { ...before }), text, 'no change: the same text')
})

t.test('serializeEntry takes the flat edit for Markdown and YAML files and the full edit otherwise', async t => {
  const md = '---\ntitle: Old words\ntags:\n  - a\n---\n\n## Body\n\nText.\n'
  const data = parseEntry('md', md)
  const out = serializeEntry('md', { ...data, title: 'New words' }, md)
  t.equal(out, md.replace('Old words', 'New words'))
  t.same(parseEntry('md', out), { ...data, title: 'New words' })
  // A value that needs quoting goes through the full edit (and still changes one line).
  const quoted = serializeEntry('md', { ...data, title: 'a: b' }, md)
  t.equal(quoted, md.replace('Old words', '"a: b"'))
  // A comment after a value: not flat, the full parser edits it and keeps the comment.
  const commented = '---\ntitle: Old # note\n---\nBody\n'
  t.equal(serializeEntry('md', { title: 'New', body: 'Body\n' }, commented), '---\ntitle: New # note\n---\nBody\n')
  const yaml = "title: 'Old'\nn: 1\n"
  t.equal(serializeEntry('yaml', { title: 'Fresh', n: 1 }, yaml), "title: 'Fresh'\nn: 1\n")
  t.equal(serializeEntry('yaml', { title: 'Old', n: 1 }, yaml), yaml, 'unchanged data: the same text')
})
