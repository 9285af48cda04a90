import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import remarkMdx from 'remark-mdx'
import type { Root } from 'mdast'
import { fromRoot } from '../../helpers/repo-root.js'
import { parseInRegions } from '../../../lib/content/markdown/parse-body.js'

// A body parsed region by region must give the very tree a whole parse gives (positions, lists'
// looseness, references resolved across regions, MDX's JavaScript positions), for every cut it may
// take: at every line it can (1 character a region) and at its usual size.
const markdown = unified().use(remarkParse).use(remarkGfm).freeze()
const mdx = unified().use(remarkParse).use(remarkMdx).use(remarkGfm).freeze()

interface Counted { parse: (text: string) => Root, calls: number, chars: number }
const counted = (processor: typeof markdown): Counted => {
  const c: Counted = { calls: 0, chars: 0, parse: (text) => { c.calls++; c.chars += text.length; return processor.parse(text) } }
  return c
}

const corpus = readdirSync(fromRoot('test/fixtures/markdown-corpus')).filter(f => f.endsWith('.md')).sort()
  .map(name => ({ name, body: readFileSync(fromRoot('test/fixtures/markdown-corpus', name), 'utf8') }))

const TRICKY: Record<string, string> = {
  'a fence holding blank lines and column-0 lines': 'a\n\n```\ncode\n\nnot cut\n\n```\n\nafter\n',
  'a fence left open': 'a\n\n```\ncode\n\nmore\n',
  'a fence in a list item': '- item\n  ```\n  code\n\nafter\n\n  ```\n',
  'a <pre> HTML block with a blank line': '<pre>\nx\n\ny\n</pre>\n\nz\n',
  'an HTML comment with blank lines': '<!--\n\nc\n\n-->\n\nd\n',
  'a div around Markdown': '<div>\n\n*text*\n\n</div>\n',
  'references defined in later regions and in a quote': '[a] and [B c][] and [d][e]\n\nx\n\n[a]: /1\n\n[b  c]: /2\n\ny\n\n> [e]: /3\n',
  'an escaped bracket in a label': 'see [a\\]b]\n\nz\n\n[a\\]b]: /x\n',
  'footnotes defined later': 'text[^1] and [^n b]\n\nq\n\n[^1]: one\n\n    more\n\n[^n b]: two\n',
  'lazy lines in quotes': '> a\nb\n\nc\n\n> d\n\ne\n',
  'loose lists': '- a\n\n- b\n\n  c\n\nd\n\n1. x\n\n2) y\n\nz\n',
  'indented code': '    code\n\n    more\n\nx\n\n    code2\n',
  'setext headings': 'a\n\n===\n\nb\n---\n\nc\n',
  'tables': '| a | b |\n|---|---|\n| 1 | 2 |\n\nx\n\n| c |\n|---|\n',
  'CRLF': 'a\r\n\r\nb\r\n\r\n- c\r\n\r\nd\r\n',
  'CR': 'a\r\rb\r\rc',
  'blank lines of spaces': 'a\n  \t\nb\n \n\nc',
  'leading and trailing blank lines': '\n\n\na\n\nb\n\n\n',
  'a definition over lines, used before': '[x]\n\n[x]:\n/url\n"title"\n\ny\n',
  'a label defined twice': '[x]: /1\n\n[x]\n\n[x]: /2\n\n[x]\n',
  'a byte order mark': '\uFEFFa\n\nb\n'
}

const MDX: Record<string, string> = {
  'JSX, expressions and ESM over blank lines': 'import A from "a"\n\n<Tabs>\n\ntext\n\n</Tabs>\n\nafter {1 + 1}\n\n{\n\n  2\n\n}\n\nexport const x = {\n\n  a: 1\n}\n\nend\n'
}

t.test('the tree is the whole parse\'s', async t => {
  const cases = [
    ...corpus.map(d => ({ name: d.name, body: d.body, processor: markdown })),
    { name: 'the corpus as one body', body: corpus.map(d => d.body).join('\n\n'), processor: markdown },
    ...Object.entries(TRICKY).map(([name, body]) => ({ name, body, processor: markdown })),
    ...Object.entries(MDX).map(([name, body]) => ({ name, body, processor: mdx }))
  ]
  for (const { name, body, processor } of cases) {
    const whole = processor.parse(body)
    for (const chars of [1, 2000]) {
      const c = counted(processor)
      t.same(parseInRegions(body, c.parse, chars), whole, `${name} (regions of ${chars})`)
    }
  }
})

t.test('a long body is parsed in regions, each once or twice', async t => {
  const body = Array.from({ length: 3 }, () => corpus.map(d => d.body.replace(/\r/g, '')).join('\n\n')).join('\n\n')
  const c = counted(markdown)
  const tree = parseInRegions(body, c.parse)
  t.ok(c.calls > body.length / 5000, `${c.calls} regions of ${body.length} characters`)
  t.ok(c.chars < 2 * body.length, `${c.chars} characters parsed`)
  t.equal(tree.children.at(-1)?.position?.end.offset, body.trimEnd().length, 'the last node ends at the body\'s end')
  const m = counted(mdx)
  parseInRegions(MDX['JSX, expressions and ESM over blank lines']!, m.parse, 1)
  t.ok(m.calls > 3, 'an MDX body is cut too')
})

t.test('a body with no cut is parsed once', async t => {
  const c = counted(markdown)
  parseInRegions('- a\n\n- b\n\n  c\n', c.parse)
  t.equal(c.calls, 1)
})
