import t from 'tap'
import { parseEntry, serializeEntry, EntryParseError, type EntryData, type EntryFormat } from '../../lib/content/formats.js'
import { changedLines } from '../helpers/text-diff.js'

/** A Hugo post with TOML frontmatter: comments, literal strings, dates with and without time, tables. */
const TOML_POST = [
  '+++',
  '# Hugo front matter',
  'title = "Markdown Syntax Guide"',
  "description = 'Sample article showcasing basic Markdown syntax'",
  'date = 2019-03-11T00:00:00+01:00',
  'lastmod = 2022-05-01 15:23:59',
  'publishDate = 2019-03-11',
  'tags = ["markdown", "css", "html"]',
  'weight = 1.5',
  'draft = false',
  '',
  '[params]',
  '  author = "Zoë"   # who wrote it',
  '  series = [',
  '    "guides",',
  '  ]',
  '',
  '[[resources]]',
  '  src = "images/cover.jpg"',
  '+++',
  '',
  'This article offers a sample of basic Markdown syntax.',
  ''
].join('\n')

/** Hugo's JSON frontmatter, four-space indented. */
const JSON_POST = [
  '{',
  '    "title": "Emoji Support",',
  '    "date": "2019-03-05",',
  '    "tags": ["emoji", "fun"],',
  '    "params": {',
  '        "author": "Hugo Authors",',
  '        "toc": true',
  '    }',
  '}',
  '',
  'Emoji can be enabled in a Hugo project.',
  ''
].join('\n')

function edit (format: EntryFormat, text: string, change: (d: EntryData) => void): string {
  const data = structuredClone(parseEntry(format, text))
  change(data)
  return serializeEntry(format, data, text)
}

t.test('TOML frontmatter: dates as written, tables, arrays of tables', async t => {
  const data = parseEntry('md', TOML_POST)
  t.equal(data.date, '2019-03-11T00:00:00+01:00')
  t.equal(data.lastmod, '2022-05-01 15:23:59', 'a local date-time keeps its space')
  t.equal(data.publishDate, '2019-03-11')
  t.same(data.params, { author: 'Zoë', series: ['guides'] })
  t.same(data.resources, [{ src: 'images/cover.jpg' }])
  t.equal(data.body, '\nThis article offers a sample of basic Markdown syntax.\n')
  t.equal(Object.getPrototypeOf(data.params), Object.prototype, 'plain objects')
})

t.test('TOML frontmatter: a one-field save changes only that value', async t => {
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { d.title = 'A "new" title' })), {
    removed: ['title = "Markdown Syntax Guide"\n'], added: ['title = "A \\"new\\" title"\n']
  })
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { d.description = 'Short' })), {
    removed: ["description = 'Sample article showcasing basic Markdown syntax'\n"], added: ["description = 'Short'\n"]
  }, 'a literal string stays literal')
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { d.publishDate = '2020-01-02' })), {
    removed: ['publishDate = 2019-03-11\n'], added: ['publishDate = 2020-01-02\n']
  }, 'a date stays a date')
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { d.weight = 2 })), {
    removed: ['weight = 1.5\n'], added: ['weight = 2.0\n']
  }, 'a float stays a float')
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { (d.params as EntryData).author = 'Ann' })), {
    removed: ['  author = "Zoë"   # who wrote it\n'], added: ['  author = "Ann"   # who wrote it\n']
  })
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { (d.resources as EntryData[])[0]!.src = 'b.png' })), {
    removed: ['  src = "images/cover.jpg"\n'], added: ['  src = "b.png"\n']
  })
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { (d.tags as string[]).push('go') })), {
    removed: ['tags = ["markdown", "css", "html"]\n'], added: ['tags = ["markdown", "css", "html", "go"]\n']
  })
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { ((d.params as EntryData).series as string[]).push('intro') })), {
    removed: [], added: ['    "intro",\n']
  }, 'a multi-line array gets a new line')
})

t.test('TOML frontmatter: adding and removing keys; no-op; body save', async t => {
  const added = edit('md', TOML_POST, d => { d.author = 'Jane' })
  t.same(changedLines(TOML_POST, added), { removed: [], added: ['author = "Jane"\n'] })
  t.same(changedLines(TOML_POST, edit('md', TOML_POST, d => { (d.params as EntryData).toc = true })), { removed: [], added: ['  toc = true\n'] })
  t.ok(added.includes('draft = false\nauthor = "Jane"\n\n[params]'), 'a top-level key goes before the first table')
  const removed = edit('md', TOML_POST, d => { delete d.draft })
  t.same(changedLines(TOML_POST, removed), { removed: ['draft = false\n'], added: [] })
  t.equal(serializeEntry('md', parseEntry('md', TOML_POST), TOML_POST), TOML_POST)
  const body = edit('md', TOML_POST, d => { d.body = 'Other\n' })
  t.equal(body, TOML_POST.slice(0, TOML_POST.indexOf('+++\n\nThis') + 4) + 'Other\n')
})

t.test('a .toml data file: one value, a new key at the end of its table, CRLF', async t => {
  const text = '# Social links\r\ntitle = "Links"\r\n\r\n[twitter]\r\nurl = "https://twitter.com/x"  # old\r\nlabel = \'Twitter\'\r\n\r\n[github]\r\nurl = "https://github.com/x"\r\n'
  t.same(changedLines(text, edit('toml', text, d => { (d.github as EntryData).url = 'https://github.com/y' })), {
    removed: ['url = "https://github.com/x"\r\n'], added: ['url = "https://github.com/y"\r\n']
  })
  t.same(changedLines(text, edit('toml', text, d => { (d.twitter as EntryData).handle = '@x' })), {
    removed: [], added: ['handle = "@x"\r\n']
  })
  t.same(changedLines(text, edit('toml', text, d => { delete (d.twitter as EntryData).label })), { removed: ["label = 'Twitter'\r\n"], added: [] })
})

t.test('a TOML array of tables: an appended item is a new [[table]], a removed one loses its section', async t => {
  const text = '# links\n[[links]]\n  name = "GitHub"\n  url = "https://github.com/example"\n\n[[links]]\n  name = "Mastodon"\n  url = "https://mastodon.social/@example"\n'
  t.same(changedLines(text, edit('toml', text, d => { (d.links as EntryData[]).push({ name: 'Site', url: 'https://example.com' }) })), {
    removed: [], added: ['\n', '[[links]]\n', '  name = "Site"\n', '  url = "https://example.com"\n']
  })
  t.same(changedLines(text, edit('toml', text, d => { (d.links as EntryData[]).shift() })), {
    removed: ['  name = "GitHub"\n', '  url = "https://github.com/example"\n', '\n', '[[links]]\n'], added: []
  })
  t.equal(edit('toml', text, d => { (d.links as EntryData[]).pop() }), '# links\n[[links]]\n  name = "GitHub"\n  url = "https://github.com/example"\n')
})

t.test('JSON frontmatter (Hugo): one value, new key last, removal, body kept', async t => {
  const data = parseEntry('md', JSON_POST)
  t.equal(data.title, 'Emoji Support')
  t.equal(data.body, '\nEmoji can be enabled in a Hugo project.\n')
  t.same(changedLines(JSON_POST, edit('md', JSON_POST, d => { d.title = 'Emoji' })), {
    removed: ['    "title": "Emoji Support",\n'], added: ['    "title": "Emoji",\n']
  })
  t.same(changedLines(JSON_POST, edit('md', JSON_POST, d => { (d.params as EntryData).toc = false })), {
    removed: ['        "toc": true\n'], added: ['        "toc": false\n']
  })
  t.same(changedLines(JSON_POST, edit('md', JSON_POST, d => { d.draft = true })), {
    removed: ['    }\n'], added: ['    },\n', '    "draft": true\n']
  })
  t.same(changedLines(JSON_POST, edit('md', JSON_POST, d => { delete d.date })), { removed: ['    "date": "2019-03-05",\n'], added: [] })
  t.equal(serializeEntry('md', parseEntry('md', JSON_POST), JSON_POST), JSON_POST)
  const emptied = serializeEntry('md', { body: 'text\n' }, JSON_POST)
  t.same(parseEntry('md', emptied), { body: 'text\n' }, 'a JSON frontmatter emptied of its fields still reads as frontmatter')
  t.ok(edit('md', JSON_POST, d => { d.body = 'x\n' }).startsWith(JSON_POST.slice(0, JSON_POST.indexOf('}\n') + 2)))
})

t.test('a .json data file keeps its indentation and key order; a new key goes last; lists', async t => {
  const text = '{\n\t"name": "Site",\n\t"menu": [\n\t\t{ "title": "Home", "url": "/" }\n\t],\n\t"count": 3\n}\n'
  t.same(changedLines(text, edit('json', text, d => { d.count = 4 })), { removed: ['\t"count": 3\n'], added: ['\t"count": 4\n'] })
  t.same(changedLines(text, edit('json', text, d => { d.extra = { a: 1 } })), {
    removed: ['\t"count": 3\n'], added: ['\t"count": 3,\n', '\t"extra": {\n', '\t\t"a": 1\n', '\t}\n']
  })
  t.same(changedLines(text, edit('json', text, d => { ((d.menu as EntryData[])[0]!).title = 'Start' })), {
    removed: ['\t\t{ "title": "Home", "url": "/" }\n'], added: ['\t\t{ "title": "Start", "url": "/" }\n']
  })
  const list = '[\n  { "id": 1 },\n  { "id": 2 }\n]\n'
  t.same(parseEntry('json', list), { items: [{ id: 1 }, { id: 2 }] })
  const appended = edit('json', list, d => { (d.items as unknown[]).push({ id: 3 }) })
  t.same(JSON.parse(appended), [{ id: 1 }, { id: 2 }, { id: 3 }], 'written as a list again')
  t.same(changedLines(list, appended), { removed: ['  { "id": 2 }\n'], added: ['  { "id": 2 },\n', '  {\n', '    "id": 3\n', '  }\n'] })
  t.equal(serializeEntry('json', { title: 'New' }), '{\n  "title": "New"\n}\n', 'new files: two-space indent')
  const inline = '{\n  "links": { "web": "a", "mail": null },\n  "n": 1\n}\n'
  t.same(changedLines(inline, edit('json', inline, d => { delete (d.links as EntryData).mail })), {
    removed: ['  "links": { "web": "a", "mail": null },\n'], added: ['  "links": { "web": "a" },\n']
  }, 'a one-line object loses a key on its line')
  t.equal(edit('json', '{\n  "only": 1\n}\n', d => { delete d.only; d.other = 2 }), '{\n  "other": 2\n}\n', 'an emptied object gets its new key on a line of its own')
})

t.test('new Markdown files get the frontmatter kind asked for', async t => {
  t.equal(serializeEntry('md', { title: 'T', date: '2024-01-31', body: 'Hi\n' }, undefined, { frontmatter: 'toml' }), '+++\ntitle = "T"\ndate = 2024-01-31\n+++\nHi\n')
  t.equal(serializeEntry('md', { title: 'T', body: 'Hi\n' }, undefined, { frontmatter: 'json' }), '{\n  "title": "T"\n}\nHi\n')
  t.equal(serializeEntry('mdx', { title: 'T', body: 'Hi\n' }), '---\ntitle: T\n---\nHi\n')
  const toml = serializeEntry('md', { title: 'T', body: 'x' }, undefined, { frontmatter: 'toml' })
  t.same(parseEntry('md', toml), { title: 'T', body: 'x' })
  t.equal(serializeEntry('md', { title: 'New', body: 'x\n' }, TOML_POST).slice(0, 4), '+++\n', 'an existing file keeps its kind')
})

t.test('hostile TOML and JSON are unreadable, never code', async t => {
  t.throws(() => parseEntry('toml', 'a = \n'), EntryParseError)
  t.throws(() => parseEntry('toml', 'a = 1\na = 2\n'), EntryParseError)
  t.throws(() => parseEntry('toml', 'a = ' + '['.repeat(5000) + ']'.repeat(5000) + '\n'), EntryParseError)
  t.throws(() => parseEntry('md', '+++\ntitle = "x\n+++\nbody\n'), EntryParseError)
  t.throws(() => parseEntry('json', '{"a": }'), EntryParseError)
  t.throws(() => parseEntry('json', '"text"'), /object or a list/)
  t.throws(() => parseEntry('md', '{\n  "title": oops\n}\nbody\n'), EntryParseError)
  t.throws(() => parseEntry('md', '{\n  "title": "never closed"\n'), EntryParseError)
  t.same(parseEntry('md', '{{< figure src="a.png" >}}\ntext\n'), { body: '{{< figure src="a.png" >}}\ntext\n' }, 'a Hugo shortcode is body')
})
