import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseEntry, serializeEntry, isMarkdownFormat, parseMarkdown, EntryParseError, type EntryData, type EntryFormat } from '../../lib/content/formats.js'
import { EXAMPLE_SITES, EXAMPLE_SITES_DIR } from '../helpers/example-site.js'
import { walkFiles } from '../helpers/site-entries.js'
import { changedLines } from '../helpers/text-diff.js'

/** Site files that are not content (package manifests, generator configs, a Go template). */
const NOT_CONTENT = /(^|\/)(package\.json|tsconfig\.json|archetypes\/.*|_config\.yml|hugo\.toml|config\.toml)$/

const FORMAT_OF: Record<string, EntryFormat> = {
  '.md': 'md', '.markdown': 'md', '.mdx': 'mdx', '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml', '.toml': 'toml'
}

function editedValue (v: unknown): unknown {
  if (typeof v === 'string') return v + ' (edited)'
  if (typeof v === 'number') return v + 1
  if (typeof v === 'boolean') return !v
  return undefined
}

/** Whether a value's source is on one line (a changed scalar then changes exactly one line). */
function oneLine (text: string, key: string, value: unknown): boolean {
  if (typeof value === 'string' && value.includes('\n')) return false
  const line = text.split('\n').find(l => new RegExp(`^\\s*"?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*[:=]`).test(l))
  return line !== undefined && !/[:=]\s*(>|\||"""|''')[-+]?\s*(#.*)?\r?$/.test(line) && !/[:=]\s*\r?$/.test(line)
}

for (const site of EXAMPLE_SITES) {
  t.test(`${site}: every content file keeps its bytes except the edited value`, async t => {
    const root = path.join(EXAMPLE_SITES_DIR, site)
    let files = 0
    for (const rel of await walkFiles(root)) {
      const format = FORMAT_OF[path.extname(rel)]
      if (format === undefined || NOT_CONTENT.test(rel)) continue
      const text = await readFile(path.join(root, rel), 'utf8')
      let data: EntryData
      try { data = parseEntry(format, text) } catch (err) {
        t.ok(err instanceof EntryParseError, `${rel}: unreadable: ${(err as Error).message}`)
        continue
      }
      files++
      t.equal(serializeEntry(format, data, text), text, `${rel}: a save without changes writes the same bytes`)
      // The object the scalar fields live in: the data, or the first item of a list-shaped file.
      const list = Array.isArray(data.items) && Object.keys(data).length === 1
      const fieldsOf = (d: EntryData): EntryData => list ? (d.items as EntryData[])[0]! : d
      const frontText = isMarkdownFormat(format) ? parseMarkdown(text).head : text
      for (const [key, value] of Object.entries(fieldsOf(data))) {
        const next = editedValue(value)
        if (key === 'body' || next === undefined) continue
        const copy = structuredClone(data)
        fieldsOf(copy)[key] = next
        const out = serializeEntry(format, copy, text)
        t.same(parseEntry(format, out), copy, `${rel}: ${key} saved`)
        const diff = changedLines(text, out)
        if (oneLine(frontText, key, value)) {
          t.equal(diff.removed.length, 1, `${rel}: saving ${key} changes one line`)
          t.equal(diff.added.length, 1, `${rel}: saving ${key} writes one line`)
          t.match(diff.removed[0], key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), `${rel}: the line of ${key}`)
        }
        if (isMarkdownFormat(format)) t.ok(out.endsWith(data.body as string), `${rel}: body kept byte for byte`)
      }
      const added = structuredClone(data)
      fieldsOf(added).cmsAdded = 'new value'
      const addedText = serializeEntry(format, added, text)
      t.same(parseEntry(format, addedText), added, `${rel}: a new key is saved`)
      const addDiff = changedLines(text, addedText)
      if (isMarkdownFormat(format) && parseMarkdown(text).kind === null) {
        t.same(addDiff, { removed: [], added: ['---\n', 'cmsAdded: new value\n', '---\n'] }, `${rel}: a first key opens a frontmatter`)
      } else {
        t.ok(addDiff.added.length - addDiff.removed.length === 1 && addDiff.removed.length <= 1, `${rel}: a new key is one line`)
      }
      if (isMarkdownFormat(format)) {
        const body = serializeEntry(format, { ...data, body: 'A new body.\n' }, text)
        t.equal(body, parseMarkdown(text).head + 'A new body.\n', `${rel}: a body save keeps the frontmatter bytes`)
      }
    }
    t.ok(files >= 5, `${files} content files edited`)
  })
}
