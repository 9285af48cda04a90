import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { toHtml } from 'hast-util-to-html'
import { fromHtml } from 'hast-util-from-html'
import { visit } from 'unist-util-visit'
import type { Element } from 'hast'
import { startServer, repoFingerprint, writeHeaders, git, type TestServer } from '../helpers/site.js'
import { renderMarkdown, formatSourceHint } from '../../lib/content/markdown/index.js'
import { renderTree } from '../../lib/content/markdown/render.js'

// Issue 15, part 2 / CONTRACT 11: a one-word edit through the real md_block route changes the
// stored body by that word alone, whatever else the block holds.

const API = '/api/cms'
const config = { collections: { posts: { format: 'md' as const } } }
const BODY = [
  '# Field notes',
  '',
  'The chart ![Monthly visitors](/img/chart.png "Visitors, 2024") shows the spring peak,[^peak] and the',
  'numbers behind it are in the appendix.',
  '',
  'See [the importer docs][docs] and [the spec](https://spec.example.org/ "The spec") for the details,',
  'or the [FAQ][] if in doubt.',
  '',
  'Acme&trade; and &copy;&nbsp;2024 Acme Corp &mdash; prices in &euro; &amp; more.',
  '',
  'Press <kbd>Ctrl</kbd>+<kbd>S</kbd> to save a draft, <kbd>Esc</kbd> to cancel.',
  '',
  'This paragraph is wrapped by hand at a fixed width, so that',
  'it spans three source lines, and a one-word edit must keep',
  'every line break where the writer put it.',
  '',
  '### A heading with a closing sequence ###',
  '',
  '[docs]: https://docs.example.org/importer "Importer docs"',
  '[faq]: ./faq.md',
  '[^peak]: The peak was in April.',
  ''
].join('\n')
const MDX = 'import Chart from "./Chart.js"\n\n<Tabs items={["a", "b"]}>\n\nexport const meta = { x: 1 }\n\nProse.\n'
const file = (id: string): string => `content/posts/${id}.md`
// One entry per test, so that one server serves them all (each test edits its own entry's draft).
const IDS = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'append', 'emphasis', 'hostile']
const files: Record<string, string> = Object.fromEntries(IDS.map(id => [file(id), `---\ntitle: Notes\n---\n${BODY}`]))
files[file('mdx')] = `---\ntitle: MDX\n---\n${MDX}`

interface Block { src: string, inner: string }

/** The hinted blocks of a body as the page serves them: hint and innerHTML. */
function servedBlocks (body: string): Block[] {
  const out: Block[] = []
  visit(renderTree(body, { collection: 'posts', id: 'notes' }), 'element', (node: Element) => {
    if (typeof node.properties.dataCmsSrc === 'string') out.push({ src: node.properties.dataCmsSrc, inner: toHtml(node.children) })
  })
  return out
}

async function storedBody (s: TestServer, id: string): Promise<string | undefined> {
  const refs = git(s.repoDir, 'for-each-ref', '--format=%(refname)', 'refs/cms/drafts/').split('\n').filter(Boolean)
  if (refs.length === 0) return undefined
  const editorId = decodeURIComponent((refs[0] as string).slice('refs/cms/drafts/'.length))
  const draft = await s.services.drafts.get(editorId, 'posts', id)
  return draft?.data?.body as string | undefined
}

let server: { s: TestServer, mdBlock: (id: string, src: string, html: string) => Promise<Response> } | undefined

t.before(async () => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mdBlock = async (id: string, src: string, html: string): Promise<Response> => await s.request(`${API}/mutate`, {
    method: 'POST',
    headers: writeHeaders(cookie),
    body: JSON.stringify({ type: 'md_block', collection: 'posts', id, blockPath: 'body', src, html })
  })
  server = { s, mdBlock }
})

function setup (): { s: TestServer, mdBlock: (id: string, src: string, html: string) => Promise<Response> } {
  if (server === undefined) throw new Error('no server')
  return server
}

/** The block whose source starts with `start`. */
function block (body: string, start: string): Block {
  const found = servedBlocks(body).find(b => {
    const [from = 0] = b.src.split(':').map(Number)
    return body.startsWith(start, from)
  })
  if (found === undefined) throw new Error(`no block starts with ${start}`)
  return found
}

const cases: Array<{ name: string, start: string, after: string }> = [
  { name: 'a paragraph with an image and a footnote reference', start: 'The chart', after: 'shows the' },
  { name: 'reference links and a link with a title', start: 'See [the importer', after: 'for the' },
  { name: 'entities', start: 'Acme&trade;', after: 'prices in' },
  { name: 'inline HTML (kbd)', start: 'Press <kbd>', after: 'to save a' },
  { name: 'a paragraph hard-wrapped over three lines', start: 'This paragraph', after: 'so that\nit spans' },
  { name: 'a heading with a closing sequence', start: '### A heading', after: 'with a' }
]

for (const [n, c] of cases.entries()) {
  t.test(`one typed word changes only that word: ${c.name}`, async t => {
    const { s, mdBlock } = setup()
    const id = `n${n}`
    const { src, inner } = block(BODY, c.start)
    // The editor types "typed " before the word after `after`, inside a text node of the block.
    t.ok(inner.includes(c.after), `the served HTML holds ${JSON.stringify(c.after)}`)
    const res = await mdBlock(id, src, inner.replace(c.after, c.after + ' typed'))
    t.equal(res.status, 200)
    const expected = BODY.replace(c.after, c.after + ' typed')
    t.not(expected, BODY)
    t.equal(await storedBody(s, id), expected, 'the draft body is the base body with the word inserted, no other byte changed')
    t.equal(await readFile(path.join(s.repoDir, file(id)), 'utf8'), files[file(id)], 'the base file is untouched')
  })
}

t.test('appending a word at the end of each of those blocks changes the body by the word alone', async t => {
  const { s, mdBlock } = setup()
  let body = BODY
  for (const c of cases) {
    const { src, inner } = block(body, c.start)
    const res = await mdBlock('append', src, inner + ' zyxword')
    t.equal(res.status, 200, c.name)
    const next = await storedBody(s, 'append')
    if (next === undefined) throw new Error('no draft')
    const [, end = 0] = src.split(':').map(Number)
    const closing = c.start.startsWith('###') ? ' ###' : ''
    t.equal(next, body.slice(0, end - closing.length) + ' zyxword' + body.slice(end - closing.length), c.name)
    body = next
  }
})

t.test('an edit that adds emphasis writes only the markers around the word', async t => {
  const { s, mdBlock } = setup()
  const { src, inner } = block(BODY, 'The chart')
  const res = await mdBlock('emphasis', src, inner.replace('the appendix', 'the <em>appendix</em>'))
  t.equal(res.status, 200)
  const body = await storedBody(s, 'emphasis') ?? ''
  t.equal(body, BODY.replace('the appendix', 'the *appendix*'), 'the image, the footnote reference and the line breaks keep their source')
  t.match(renderMarkdown(body, { collection: 'posts', id: 'notes' }), /<em>appendix<\/em>/)
})

t.test('hostile HTML through the grown allowlist stores nothing unsafe', async t => {
  const { s, mdBlock } = setup()
  const { src, inner } = block(BODY, 'Press <kbd>')
  const hostile = [
    '<img src="javascript:alert(1)" alt="j">', '<img src=x onerror=alert(2)>', '<img src="data:image/svg+xml,<svg onload=alert(3)>">',
    '<img src="DATA:text/html,x">', '<img src=" java&#x09;script:alert(4)">', '<img src="vbscript:x">',
    '<abbr title="&quot;><script>alert(5)</script>" onmouseover="alert(6)">A</abbr>',
    '<svg><p><style><img src=x onerror=alert(7)></style></p></svg>',
    '<noscript><p title="</noscript><img src=x onerror=alert(8)>"></noscript>',
    '<math><mi><style><img src=x onerror=alert(9)></style></mi></math>',
    '<sup><a href="javascript:alert(10)" data-footnote-ref>1</a></sup>', '<kbd onclick="alert(11)">K</kbd>',
    '<mark style="background:url(javascript:alert(12))">M</mark>', '<a href="https://ok.example">ok</a>'
  ].join(' ')
  const res = await mdBlock('hostile', src, inner + ' ' + hostile)
  t.equal(res.status, 200)
  const body = await storedBody(s, 'hostile') ?? ''
  t.notMatch(body, /javascript|onerror|onmouseover|onclick|onload|data:|vbscript|<script|<style|<svg|<math|<noscript|style=/i, body)
  t.match(body, /\[ok\]\(https:\/\/ok\.example\)/)
  t.ok(body.startsWith(BODY.slice(0, BODY.indexOf('Press <kbd>'))), 'the blocks before are untouched')
  // The page rendered from it, as a browser parses it: no script, style or foreign element, no
  // event handler, no URL a browser would run (an attribute value may hold any text).
  const page = fromHtml(renderMarkdown(body, { collection: 'posts', id: 'notes' }), { fragment: true })
  const bad: string[] = []
  visit(page, 'element', (node: Element) => {
    if (['script', 'style', 'svg', 'math', 'noscript', 'iframe'].includes(node.tagName)) bad.push(node.tagName)
    for (const [key, value] of Object.entries(node.properties)) {
      if (/^on/i.test(key) || key === 'style') bad.push(`${node.tagName}[${key}]`)
      if ((key === 'href' || key === 'src') && !/^(https?:|mailto:|[#./]|[a-z0-9_-]+(?:[./]|$))/i.test(String(value))) bad.push(`${node.tagName}[${key}=${String(value)}]`)
    }
  })
  t.same(bad, [], 'the page rendered from it is clean too')
  t.match(body, /<abbr title="&#34;&#62;&#60;script&#62;alert\(5\)&#60;\/script&#62;">A<\/abbr>/, 'the abbr title is stored escaped')
})

t.test('MDX ESM and JSX blocks carry no hint and are refused', async t => {
  const { s, mdBlock } = setup()
  t.same(servedBlocks(MDX).map(b => b.inner), ['Prose.'], 'only the prose is editable')
  const before = await repoFingerprint(s.repoDir)
  for (const start of ['import Chart', '<Tabs', 'export const']) {
    const from = MDX.indexOf(start)
    const res = await mdBlock('mdx', formatSourceHint(MDX, from, MDX.indexOf('\n', from)), 'rewritten')
    t.equal(res.status, 409, start)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
})
