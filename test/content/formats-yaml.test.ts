import t from 'tap'
import { parseEntry, serializeEntry, parseMarkdown, EntryParseError, type EntryData, type EntryFormat } from '../../lib/content/formats.js'
import { changedLines } from '../helpers/text-diff.js'

/** A Jekyll post as people write them: comments, odd spacing, both quotes, flow and block lists. */
const POST = [
  '---',
  '# Front matter of the launch post',
  'layout: post',
  'title:  "Welcome to Jekyll!"   # shown in the feed',
  'date:   2019-03-08 10:15:00 +0100',
  'updated: 2019-03-08',
  "categories: [jekyll, 'update', \"news\"]",
  'tags:',
  '  - intro',
  '  - café',
  'excerpt: >-',
  '  A long folded excerpt that',
  '  spans two lines.',
  'image:',
  "author: 'Zoë O''Brien'",
  '',
  'sidebar:',
  '  nav: "docs"',
  '  show: true',
  '---',
  'Body **text** stays.',
  ''
].join('\n')

function edit (format: EntryFormat, text: string, change: (d: EntryData) => void): string {
  const data = structuredClone(parseEntry(format, text))
  change(data)
  return serializeEntry(format, data, text)
}

t.test('YAML frontmatter reads dates, empty keys and strings as written', async t => {
  const data = parseEntry('md', POST)
  t.equal(data.title, 'Welcome to Jekyll!')
  t.equal(data.date, '2019-03-08 10:15:00 +0100', 'a timestamp is the text written')
  t.equal(data.updated, '2019-03-08')
  t.equal(data.image, null)
  t.equal(data.author, "Zoë O'Brien")
  t.same(data.categories, ['jekyll', 'update', 'news'])
  t.equal(data.excerpt, 'A long folded excerpt that spans two lines.')
  t.equal(data.body, 'Body **text** stays.\n')
})

t.test('a one-field save changes only that value', async t => {
  const out = edit('md', POST, d => { d.title = 'Hello again' })
  t.same(changedLines(POST, out), {
    removed: ['title:  "Welcome to Jekyll!"   # shown in the feed\n'],
    added: ['title:  "Hello again"   # shown in the feed\n']
  })
  const date = edit('md', POST, d => { d.updated = '2020-01-31' })
  t.same(changedLines(POST, date), { removed: ['updated: 2019-03-08\n'], added: ['updated: 2020-01-31\n'] })
  const item = edit('md', POST, d => { (d.tags as string[])[1] = 'launch' })
  t.same(changedLines(POST, item), { removed: ['  - café\n'], added: ['  - launch\n'] })
  const flow = edit('md', POST, d => { (d.categories as string[]).push('more') })
  t.same(changedLines(POST, flow), {
    removed: ["categories: [jekyll, 'update', \"news\"]\n"],
    added: ["categories: [jekyll, 'update', \"news\", \"more\"]\n"]
  }, 'an appended item keeps the other items and the flow style')
  const empty = edit('md', POST, d => { d.image = '/img/a.png' })
  t.same(changedLines(POST, empty), { removed: ['image:\n'], added: ['image: /img/a.png\n'] })
  const quoted = edit('md', POST, d => { d.author = 'Ann' })
  t.same(changedLines(POST, quoted), { removed: ["author: 'Zoë O''Brien'\n"], added: ["author: 'Ann'\n"] }, 'single quotes stay')
  const nested = edit('md', POST, d => { (d.sidebar as EntryData).show = false })
  t.same(changedLines(POST, nested), { removed: ['  show: true\n'], added: ['  show: false\n'] })
})

t.test('adding and removing keys touches only their lines; a no-op writes the same text', async t => {
  const added = edit('md', POST, d => { d.draft = true })
  t.same(changedLines(POST, added), { removed: [], added: ['draft: true\n'] })
  t.ok(added.includes('  show: true\ndraft: true\n---\n'), 'a new key goes last')
  const nestedAdd = edit('md', POST, d => { (d.sidebar as EntryData).title = 'Docs' })
  t.same(changedLines(POST, nestedAdd), { removed: [], added: ['  title: Docs\n'] })
  const removed = edit('md', POST, d => { delete d.excerpt })
  t.same(changedLines(POST, removed), { removed: ['excerpt: >-\n', '  A long folded excerpt that\n', '  spans two lines.\n'], added: [] })
  const itemRemoved = edit('md', POST, d => { (d.tags as string[]).shift() })
  t.same(changedLines(POST, itemRemoved), { removed: ['  - intro\n'], added: [] })
  t.equal(serializeEntry('md', parseEntry('md', POST), POST), POST, 'no change, same bytes')
})

t.test('body and frontmatter saves keep each other byte for byte', async t => {
  const body = edit('md', POST, d => { d.body = 'New body\n' })
  t.equal(body, POST.slice(0, POST.indexOf('Body **text**')) + 'New body\n')
  const title = edit('md', POST, d => { d.title = 'X' })
  t.ok(title.endsWith('---\nBody **text** stays.\n'))
})

t.test('CRLF files stay CRLF and change only the edited line', async t => {
  const crlf = POST.replace(/\n/g, '\r\n')
  const out = edit('md', crlf, d => { d.title = 'Windows' })
  t.same(changedLines(crlf, out), {
    removed: ['title:  "Welcome to Jekyll!"   # shown in the feed\r\n'],
    added: ['title:  "Windows"   # shown in the feed\r\n']
  })
  t.same(changedLines(crlf, edit('md', crlf, d => { d.extra = 'x' })), { removed: [], added: ['extra: x\r\n'] })
  t.equal(parseEntry('md', out).body, 'Body **text** stays.\r\n')
})

t.test('a .yaml data file whose top level is a list reads as { items } and is written as a list', async t => {
  const nav = '# Site navigation\n- title: Home\n  url: /\n\n- title: "About"\n  url: /about/\n'
  const data = parseEntry('yaml', nav)
  t.same(data, { items: [{ title: 'Home', url: '/' }, { title: 'About', url: '/about/' }] })
  const renamed = edit('yaml', nav, d => { (d.items as EntryData[])[1]!.title = 'About us' })
  t.same(changedLines(nav, renamed), { removed: ['- title: "About"\n'], added: ['- title: "About us"\n'] })
  const appended = edit('yaml', nav, d => { (d.items as EntryData[]).push({ title: 'Blog', url: '/blog/' }) })
  t.same(changedLines(nav, appended), { removed: [], added: ['- title: Blog\n', '  url: /blog/\n'] })
  t.ok(appended.startsWith('# Site navigation\n'), 'comments stay')
  const dropped = edit('yaml', nav, d => { (d.items as EntryData[]).shift() })
  t.same(parseEntry('yaml', dropped), { items: [{ title: 'About', url: '/about/' }] })
  t.ok(dropped.startsWith('# Site navigation\n'))
})

t.test('a .yaml data file with messy content changes one value', async t => {
  const text = "# authors\nname:   'Ada Lovelace'  # full name\nborn: 1815-12-10\nlinks: { web: 'https://ada.example', mail: null }\nbio: |\n  Wrote the first\n  program.\nempty:\n"
  const out = edit('yaml', text, d => { (d.links as EntryData).web = 'https://new.example' })
  t.same(changedLines(text, out), {
    removed: ["links: { web: 'https://ada.example', mail: null }\n"],
    added: ["links: { web: 'https://new.example', mail: null }\n"]
  })
  const bio = edit('yaml', text, d => { d.bio = 'Wrote the first\nprogram, 1843.\n' })
  t.same(changedLines(text, bio), { removed: ['  program.\n'], added: ['  program, 1843.\n'] }, 'a literal block stays literal')
  t.equal(parseEntry('yaml', text).born, '1815-12-10')
})

t.test('merge keys are read; a merged value saved becomes an explicit key', async t => {
  const text = 'base: &base\n  layout: post\n  comments: true\npage:\n  <<: *base\n  title: Hi\n'
  t.same(parseEntry('yaml', text).page, { layout: 'post', comments: true, title: 'Hi' })
  const out = edit('yaml', text, d => { (d.page as EntryData).layout = 'wide' })
  t.same(changedLines(text, out), { removed: [], added: ['  layout: wide\n'] })
  t.same(parseEntry('yaml', out).page, { layout: 'wide', comments: true, title: 'Hi' })
  t.same(parseEntry('yaml', out).base, { layout: 'post', comments: true }, 'the anchor is untouched')
})

t.test('new strings that YAML 1.1 readers (Jekyll) would take for booleans or numbers are quoted', async t => {
  const text = serializeEntry('md', { title: 'yes', answer: 'no', time: '1:30', day: '2024-01-31', tags: ['on', 'x'], body: '' })
  t.equal(text, '---\ntitle: "yes"\nanswer: "no"\ntime: "1:30"\nday: 2024-01-31\ntags:\n  - "on"\n  - x\n---\n')
  t.same(parseEntry('md', text), { title: 'yes', answer: 'no', time: '1:30', day: '2024-01-31', tags: ['on', 'x'], body: '' })
})

t.test('a plain title saved with plain-safe and unsafe strings is written as the yaml package writes it', async t => {
  const text = '---\ntitle: Old words\ntags: [a, b]\n---\nBody\n'
  const plain = ['New title', 'a', 'Version 2.0 of it', 'x_y-z.', 'two  spaces', 'e1', 'Nullable', 'yesterday']
  const quoted: Array<[string, string]> = [
    ['null', '"null"'], ['True', '"True"'], ['FALSE', '"FALSE"'],
    ['a: b', '"a: b"'], ['x #y', '"x #y"'], ['trailing ', '"trailing "'], ['12', '"12"'], ['- item', '"- item"'], ['', '""']
  ]
  for (const v of plain) {
    const out = edit('md', text, d => { d.title = v })
    t.same(changedLines(text, out), { removed: ['title: Old words\n'], added: [`title: ${v}\n`] }, v)
    t.equal(parseEntry('md', out).title, v)
  }
  // YAML 1.1 words keep the style of the plain value they replace (as before the plain-string path).
  for (const v of ['yes', 'No', 'y', 'off']) t.equal(parseEntry('md', edit('md', text, d => { d.title = v })).title, v, v)
  for (const [v, written] of quoted) {
    const out = edit('md', text, d => { d.title = v })
    t.equal(parseEntry('md', out).title, v, `${JSON.stringify(v)} reads back`)
    t.match(out, `title: ${written}\n`, `${JSON.stringify(v)} is quoted`)
  }
  // In a flow map a comma or a bracket would end the value: those strings are never written plain there.
  const flow = '---\nseo: { title: Old, x: 1 }\n---\n'
  for (const v of ['A, B', 'Plain words', 'a]b']) {
    const out = edit('md', flow, d => { (d.seo as EntryData).title = v })
    t.same(parseEntry('md', out).seo, { title: v, x: 1 }, v)
  }
})

t.test('YAML that Jekyll accepts: a flow list closed at column 1', async t => {
  const text = '---\ntitle: T\nseo:\n  keywords: [one,\n  two,\n]\n---\nbody\n'
  t.same(parseEntry('md', text).seo, { keywords: ['one', 'two'] })
  const out = edit('md', text, d => { d.title = 'New' })
  t.same(changedLines(text, out), { removed: ['title: T\n'], added: ['title: New\n'] }, 'editing another field leaves the list as Jekyll wrote it')
  const top = 'tags: [a, b,\n]\n'
  t.same(parseEntry('yaml', top), { tags: ['a', 'b'] })
})

// Each closing line scanned back to the nearest opening one: 16 KB took 1 s, these 200 KB minutes (the limit fails it).
t.test('YAML of many lines closing a flow list at column 1 reads (or is unreadable) in one pass', { timeout: 60_000 }, async t => {
  const closers = ']\n'.repeat(100_000)
  t.throws(() => parseEntry('yaml', 'a: 1\n' + closers), EntryParseError)
  t.throws(() => parseEntry('yaml', 'a: [1,\n' + closers), EntryParseError)
  t.same(parseEntry('yaml', 'a: [1,\n' + '  2,\n'.repeat(1000) + ']\n').a, [1, ...Array(1000).fill(2)])
})

t.test('hostile YAML: an alias bomb, a huge document, garbage are unreadable, quickly', async t => {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  for (const [i, n] of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].entries()) {
    const prev = String.fromCharCode(97 + i)
    levels.push(`${n}: &${n} [${Array(9).fill('*' + prev).join(',')}]`)
  }
  const bomb = levels.join('\n') + '\n'
  t.ok(bomb.length < 600)
  const started = Date.now()
  t.throws(() => parseEntry('yaml', bomb), EntryParseError)
  t.throws(() => parseEntry('md', `---\n${bomb}---\nbody\n`), EntryParseError)
  t.ok(Date.now() - started < 500, `bomb refused in ${Date.now() - started} ms`)
  t.throws(() => parseEntry('yaml', 'a: ' + 'x'.repeat(3 * 1024 * 1024) + '\n'), /longer than/)
  t.throws(() => parseEntry('yaml', 'a: [unclosed\nb: {\n'), EntryParseError)
  t.throws(() => parseEntry('yaml', 'just a string\n'), /object or a list/)
  t.throws(() => parseEntry('md', '---\n- a list\n---\nbody\n'), /mapping/)
  t.throws(() => parseEntry('yaml', 'a: 1\na: 2\n'), EntryParseError, 'duplicate keys are ambiguous')
  t.same(parseMarkdown('---\nrun: !!js/function "function () { return 1 }"\n---\n').data, { run: 'function () { return 1 }', body: '' }, 'a tag never makes code: the value is a string')
})

t.test('a string value saved in a flat text keeps its line and quoting style', async t => {
  // Flat texts as sites write them: plain, single- and double-quoted titles, lists, block scalars, CR LF.
  const texts = [
    'title: Old words\ndate: \'2024-01-02\'\ntags:\n  - a\n  - b\n',
    "title: 'Old words'\nsummary: \"A summary\"\n",
    'title: "Old words"\ncount: 3\n',
    'note: first\ntitle: Last key\n',
    'title: Old\r\ndraft: false\r\n',
    'title: Old\nbody_text: |\n  title: not a key\n  more\nafter: y\n',
    'title: Old\ntags: [a, b]\nsubtitle: Sub\n'
  ]
  for (const text of texts) {
    const before = parseEntry('yaml', text)
    for (const value of ['New title', 'Version 2.0 of it', 'x_y-z.', 'Nullable']) {
      const out = serializeEntry('yaml', { ...before, title: value }, text)
      t.same(parseEntry('yaml', out), { ...before, title: value }, `${JSON.stringify(text)} title=${value}`)
      const line = text.split(/\r?\n/).find(l => l.startsWith('title:')) as string
      const old = /^title: *(.*)$/.exec(line)?.[1] as string
      const quote = old.startsWith("'") || old.startsWith('"') ? old[0] as string : ''
      t.equal(out, text.replace(line, line.replace(old, quote + value + quote)), `${JSON.stringify(text)}: only the value changed`)
    }
  }
})

t.test('a prototype key never reaches the prototype, and the size bound holds', async t => {
  const data = parseMarkdown('---\n__proto__:\n  polluted: 1\ntitle: x\n---\nbody').data
  t.equal(Object.getPrototypeOf(data), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.throws(() => parseEntry('yaml', 'a: ' + 'x'.repeat(2 * 1024 * 1024) + '\n'), EntryParseError, 'longer than the YAML bound')
  const md = '---\ntitle: Old words\ntags:\n  - a\n---\n\n## Body\n\nText.\n'
  t.equal(serializeEntry('md', { ...parseEntry('md', md), title: 'New words' }, md), md.replace('Old words', 'New words'))
  t.equal(serializeEntry('md', { ...parseEntry('md', md), title: 'a: b' }, md), md.replace('Old words', '"a: b"'))
  t.equal(serializeEntry('md', { title: 'New', body: 'Body\n' }, '---\ntitle: Old # note\n---\nBody\n'), '---\ntitle: New # note\n---\nBody\n')
  t.equal(serializeEntry('yaml', { title: 'Old', n: 1 }, "title: 'Old'\nn: 1\n"), "title: 'Old'\nn: 1\n", 'unchanged data: the same text')
})
