/**
 * Init reads files through the service's format layer: each kind of frontmatter detected per file, dates as
 * text, lists as `{ items }`, and hostile input (alias bombs, code tags) refused or kept as data.
 */
import t from 'tap'
import { isMarkdownFormat, parseEntry, parseMarkdown, type EntryFormat, type FrontmatterKind } from '../../lib/content/formats.js'

/** A file's fields as init's inference reads them (infer-collections.ts): a Markdown body left out. */
function readEntryFields (format: EntryFormat, text: string): { data: Record<string, unknown>, frontmatter: FrontmatterKind | null } {
  if (!isMarkdownFormat(format)) return { data: parseEntry(format, text), frontmatter: null }
  const { data: { body: _body, ...data }, kind } = parseMarkdown(text)
  return { data, frontmatter: kind }
}

t.test('YAML, TOML and JSON frontmatter are detected per file', async t => {
  t.same(readEntryFields('md', '---\ntitle: A\ndate: 2019-03-08\n---\nBody\n'), { data: { title: 'A', date: '2019-03-08' }, frontmatter: 'yaml' })
  t.same(readEntryFields('md', '+++\ntitle = "B" # c\ndate = 2022-05-01T15:23:59+02:00\n+++\n'), { data: { title: 'B', date: '2022-05-01T15:23:59+02:00' }, frontmatter: 'toml' })
  t.same(readEntryFields('md', '{\n  "title": "C {braces} \\"q\\"",\n  "n": 1\n}\n\nBody with } brace\n'), { data: { title: 'C {braces} "q"', n: 1 }, frontmatter: 'json' })
  t.same(readEntryFields('mdx', "import X from './x'\n\n# No frontmatter\n"), { data: {}, frontmatter: null })
  t.same(readEntryFields('md', '\ufeff---\r\ntitle: CRLF\r\n---\r\nBody\r\n').data, { title: 'CRLF' }, 'BOM and CRLF')
  t.same(readEntryFields('md', '---\n---\nEmpty frontmatter\n'), { data: {}, frontmatter: 'yaml' })
})

t.test('data files: objects, top-level lists as items', async t => {
  t.same(readEntryFields('yaml', '- a\n- b\n').data, { items: ['a', 'b'] })
  t.same(readEntryFields('json', '[1, 2]').data, { items: [1, 2] })
  t.same(readEntryFields('toml', '[[links]]\nname = "x"\n').data, { links: [{ name: 'x' }] })
  t.throws(() => readEntryFields('json', '"just a string"'), /must be an object or a list/)
})

t.test('hostile input: an alias bomb is refused, code tags stay data, bad syntax says why', async t => {
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
  for (let i = 1; i < 10; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`)
  t.throws(() => readEntryFields('yaml', bomb.join('\n')), /alias/i)
  const tagged = readEntryFields('md', '---\nrun: !!js/function "function () { return 1 }"\n---\n').data
  t.equal(typeof tagged.run, 'string', 'an unknown tag is never code')
  t.throws(() => readEntryFields('md', '---\ntitle: [unclosed\n---\n'), /sufficiently indented/)
  t.throws(() => readEntryFields('md', '+++\ntitle = \n+++\n'), /TOML/)
  t.throws(() => readEntryFields('md', '{ "title": "never closed"\n'), /never closed/)
  const proto = readEntryFields('json', '{"__proto__": {"polluted": true}}').data
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
  t.ok(Object.hasOwn(proto, '__proto__'), 'kept as an own key (init drops it from the schema)')
})
