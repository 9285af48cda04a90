import t from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { startServer } from '../helpers/site.js'
import { splitMarkdown } from '../../lib/content/frontmatter.js'
import { parseYamlText } from '../../lib/content/yaml-text.js'
import { EntryParseError, type EntryData } from '../../lib/content/formats.js'
import { SchemaCompiler, type JsonSchema } from '../../lib/content/schema-tools.js'
import { rowContent } from '../../lib/storage/index-row.js'

/** Frontmatter as sites write it: the flat shape, and everything the flat reader leaves to the full parser. */
const FRONTMATTER = [
  "title: Plain\ndate: '2020-01-01'\ntags:\n  - a\n  - b\n",
  'title: Numbers\nweight: 0x1F\nratio: .5\nbig: 1e3\nnan: .NaN\ninf: -.inf\ndraft: False\nnone: ~\n',
  'title: "Quoted, with # and: colon"\nauthor: \'Zoë O\'\'Brien\'\ntags: [x, "y z", \'w\']\nempty: []\n',
  'title: Dates as written\ndate: 2019-03-08 10:15:00 +0100\ntime: 12:30\nyes: yes\n',
  'title: Folded\ndescription: >-\n  A long folded\n  description.\nsummary: |\n  Line one\n  Line two\n',
  'title: Nested\nauthor:\n  name: Ann\n  links: [a, b]\nseo: { noindex: true }\n',
  'title: &t Anchored\ncopy: *t\nbase: &b { x: 1 }\nmerged:\n  <<: *b\n  y: 2\n',
  'title: !!str 123\nweight: !!int "7"\n',
  'title: Escapes\nquote: "tab\\there \\u00e9"\n',
  'title: Comment after # here\nweight: 3 # a comment\n',
  'title: Duplicate\ntitle: Again\n',
  'title: [unclosed\n',
  'title: x\n  bad: indentation\n',
  '__proto__:\n  polluted: true\ntitle: Proto\n',
  'true: key\nnull: other\ntitle: Keys\n',
  '- a list\n- not a mapping\n',
  'title: Tabs\tinside\n',
  'title: CRLF\r\nweight: 2\r\n',
  '',
  '# only a comment\n',
  'weight: 5\n'
]

const SCHEMA: JsonSchema = { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 }, weight: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } } }
const RULES = { format: 'md' as const, titleField: 'title', orderField: 'weight' }

/** What an entry's row held before the flat reader: the full parser's data, or its error. */
function expectedContent (id: string, text: string): ReturnType<typeof rowContent> | { message: string } {
  const validate = new SchemaCompiler().validator(SCHEMA)
  try {
    const parts = splitMarkdown(text)
    let front: unknown = parts.kind === 'yaml' && parts.inner.trim() !== '' ? parseYamlText(parts.inner) : {}
    if (front === null) front = {}
    if (typeof front !== 'object' || Array.isArray(front)) throw new EntryParseError('Markdown frontmatter must be a YAML mapping')
    const data: EntryData = { ...(front as EntryData), body: parts.body }
    return rowContent(id, data, text, RULES, validate)
  } catch (err) {
    if (err instanceof EntryParseError) return { message: err.message }
    throw err
  }
}

t.test('the index worker gives the rows and read errors the full YAML parser gives', async t => {
  const files: Record<string, string> = {}
  // 21 kinds x 12 = 252 files: above the 200 files from which a worker reads the collection.
  for (let i = 0; i < FRONTMATTER.length * 12; i++) {
    const fm = FRONTMATTER[i % FRONTMATTER.length] as string
    files[`content/notes/n${String(i).padStart(3, '0')}.md`] = `---\n${fm}---\n\nBody of note ${i}.\n`
  }
  let workers = 0
  const count = (): void => { workers++ }
  process.on('worker', count)
  t.teardown(() => { process.off('worker', count) })
  const server = await startServer(t, { files, config: { collections: { notes: { format: 'md', titleField: 'title', orderField: 'weight', schema: SCHEMA } } } })
  const index = await server.services.content.index('notes')
  const rows = await index.all()
  t.ok(workers >= 1, 'read by the index worker')
  t.equal(rows.length, FRONTMATTER.length * 12)
  let errors = 0
  let issues = 0
  for (const row of rows) {
    const text = files[`content/notes/${row.id}.md`] as string
    const expected = expectedContent(row.id, text)
    if ('message' in expected) {
      errors++
      t.same(row.readError, { message: expected.message }, `${row.id}: same read error`)
      t.equal(row.fields, undefined, `${row.id}: no fields`)
      continue
    }
    t.equal(row.readError, undefined, `${row.id}: readable`)
    // Row fields crossed the thread boundary as JSON (NaN and Infinity apart): compared by value and key order.
    t.ok(isDeepStrictEqual(row.fields, expected.fields), `${row.id}: same fields`)
    t.same(Object.keys(row.fields ?? {}), Object.keys(expected.fields), `${row.id}: same key order`)
    t.equal(row.title, expected.title, `${row.id}: same title`)
    t.equal(row.order, expected.order, `${row.id}: same order`)
    t.equal(row.bodyAt, expected.bodyAt, `${row.id}: same body start`)
    t.same(row.validationIssues, expected.validationIssues, `${row.id}: same validation issues`)
    if (expected.validationIssues !== undefined) issues++
  }
  t.ok(errors >= 12 * 4, `${errors} unreadable entries compared`)
  t.ok(issues >= 12 * 3, `${issues} entries with validation issues compared`)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype reached')
})
