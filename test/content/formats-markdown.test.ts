import t from 'tap'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseEntry, serializeEntry, parseMarkdown, isMarkdownFormat, FORMAT_EXTENSIONS, EntryParseError } from '../../lib/content/formats.js'

t.test('formats and extensions', async t => {
  t.same(FORMAT_EXTENSIONS, { md: ['.md', '.markdown'], mdx: ['.mdx'], json: ['.json'], yaml: ['.yaml', '.yml'], toml: ['.toml'] })
  t.ok(isMarkdownFormat('md'))
  t.ok(isMarkdownFormat('mdx'))
  t.notOk(isMarkdownFormat('json'))
  t.notOk(isMarkdownFormat('yaml'))
})

t.test('frontmatter kinds are detected per file', async t => {
  t.same(parseMarkdown('---\ntitle: Y\n---\nb').kind, 'yaml')
  t.same(parseMarkdown('---yaml\ntitle: Y\n---\nb').data, { title: 'Y', body: 'b' })
  t.same(parseMarkdown('+++\ntitle = "T"\n+++\nb').data, { title: 'T', body: 'b' })
  t.same(parseMarkdown('{\n"title": "J"\n}\nb').data, { title: 'J', body: 'b' })
  t.same(parseMarkdown('{"title": "J", "n": {"x": "}"}}\nb').data, { title: 'J', n: { x: '}' }, body: 'b' })
  t.same(parseMarkdown('no frontmatter\n---\nat all\n').data, { body: 'no frontmatter\n---\nat all\n' })
  t.same(parseMarkdown('-----\nrule\n').data, { body: '-----\nrule\n' }, 'a line of dashes is not a fence')
  t.same(parseMarkdown('---\nnever closed\n').data, { body: '---\nnever closed\n' }, 'an unclosed fence is body')
  t.same(parseMarkdown('\uFEFF---\ntitle: B\n---\nb').data, { title: 'B', body: 'b' })
  t.same(parseMarkdown('---\r\ntitle: C\r\n---\r\nb\r\n').data, { title: 'C', body: 'b\r\n' })
  t.same(parseMarkdown('---\n---\nb').data, { body: 'b' })
})

t.test('MDX reads like Markdown and keeps imports and JSX byte for byte', async t => {
  const text = "---\ntitle: 'MDX post'\n---\nimport Chart from '../components/Chart.astro'\n\n# Hi\n\n<Chart data={[1, 2]} />\n"
  const data = parseEntry('mdx', text)
  t.equal(data.title, 'MDX post')
  const out = serializeEntry('mdx', { ...data, title: 'New' }, text)
  t.equal(out, text.replace("'MDX post'", "'New'"))
})

t.test('---js and other languages are unreadable, never evaluated', async t => {
  const marker = path.join(os.tmpdir(), `git-cms-pwned-${process.pid}`)
  for (const lang of ['js', 'javascript', 'coffee', 'JS']) {
    const text = `---${lang}\n{ title: require('fs').writeFileSync(${JSON.stringify(marker)}, 'x') }\n---\nbody\n`
    t.throws(() => parseEntry('md', text), EntryParseError, lang)
    t.equal(serializeEntry('md', { title: 'x', body: '' }, text), '---\ntitle: x\n---\n', 'replaced whole, never read as code')
  }
  t.notOk(existsSync(marker), 'nothing ran')
})

t.test('a body that would read as frontmatter is stored behind an empty frontmatter', async t => {
  for (const body of ['---js\nrequire("fs")\n---\nrest\n', '+++\ntitle = "x"\n+++\n', '{\n"a": 1\n}\n', '---\ntitle: x\n---\n', '\uFEFF---\n']) {
    const text = serializeEntry('md', { body })
    t.ok(text.startsWith('---\n---\n'), JSON.stringify(body))
    t.same(parseEntry('md', text), { body }, 'reads back as the same body')
    const again = serializeEntry('md', { body }, text)
    t.equal(again, text, 'rewriting it changes nothing')
  }
  t.equal(serializeEntry('md', { body: 'plain\n' }), 'plain\n', 'other bodies are written alone')
  t.equal(serializeEntry('md', { body: '---\nx' }, 'old body\n'), '---\n---\n---\nx', 'also over a file without frontmatter')
})

t.test('adding the first field to a file without frontmatter writes a new frontmatter', async t => {
  t.equal(serializeEntry('md', { title: 'T', body: 'text\n' }, 'text\n'), '---\ntitle: T\n---\ntext\n')
  t.equal(serializeEntry('md', { title: 'T', body: 'text\r\n' }, 'text\r\n'), '---\r\ntitle: T\r\n---\r\ntext\r\n')
  t.equal(serializeEntry('md', { body: 'text\n' }, '---\ntitle: T\n---\ntext\n'), '---\n---\ntext\n', 'removing the last field keeps an empty block')
})
