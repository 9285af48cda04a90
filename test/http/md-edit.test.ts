/**
 * GET /blocks and the md_edit command over HTTP: the source blocks a page's editor pairs with the
 * generator's rendering, and DOM edits written into the draft at the bytes of the text that changed.
 * One server for the file; each test starts with no drafts.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { startServer, repoFingerprint, writeHeaders, git } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'
import { bodyParser } from '../../lib/content/markdown/parse-body.js'
import { outlineOf } from '../../lib/content/markdown/body-outline.js'
import { RENDER_MAX_CHARS as MAX_BLOCK_BODY_CHARS } from '../../lib/commands/bounded-render.js'

const API = '/api/cms'
const config = {
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } },
    pages: { format: 'mdx' as const },
    notes: { format: 'json' as const }
  }
}
const BODY = [
  '## Getting *started* {#start}',
  '',
  'Read [the guide](https://example.com/guide "Guide") first, see ![a cat](cat.png) and say "hello" -- twice.',
  '',
  '- https://gohugo.io/documentation/',
  '- an item with `code` and&nbsp;more',
  '',
  '```js',
  'let x = 1',
  '```',
  '',
  '<div class="note">Raw HTML</div>',
  '',
  '[ref]: https://example.com/ref',
  ''
].join('\n')
/** About 200 KB of the round-trip corpus's LF documents: four times the old limit of block editing. */
const LARGE = ((): string => {
  const dir = fromRoot('test/fixtures/markdown-corpus')
  const docs = readdirSync(dir).filter(f => f.endsWith('.md')).sort().map(f => readFileSync(path.join(dir, f), 'utf8')).filter(d => !d.includes('\r'))
  let body = ''
  for (let i = 0; body.length < 200_000; i++) body += (docs[i % docs.length] as string) + '\n\n'
  return body
})()
const FILE = 'content/posts/hello.md'
const SOURCE = `---\ntitle: Hello\n---\n${BODY}`
const MDX = [
  "import Tabs from './Tabs.astro'",
  'export const meta = { a: 1 }',
  '',
  'Some *MDX* prose with {meta.a} inside.',
  '',
  '<Tabs items={["a"]}>',
  '  Tab text',
  '</Tabs>',
  '',
  '## A heading',
  '',
  '<Callout>A one-line component</Callout>',
  ''
].join('\n')
const files = {
  [FILE]: SOURCE,
  'content/pages/intro.mdx': `---\ntitle: Intro\n---\n${MDX}`,
  'content/notes/a.json': '{"n":0}\n',
  'content/posts/long.md': `---\ntitle: Long\n---\n${'A paragraph of plain words.\n\n'.repeat(Math.ceil(MAX_BLOCK_BODY_CHARS / 29) + 1)}`,
  'content/posts/large.md': `---\ntitle: Large\n---\n${LARGE}`,
  'content/posts/large-cold.md': `---\ntitle: Large too\n---\n${LARGE}\nThe end.\n`,
  'content/posts/large-block.md': `---\ntitle: Large by block\n---\n${LARGE}`,
  'content/posts/large-emptied.md': `---\ntitle: Large, a block emptied\n---\n${LARGE}`
}

// What the event loop was held before: the whole parse of the large body, here, now (the bound
// grows with it on a busy machine and stays a quarter of it). Taken before the server starts: a
// loop held for seconds lets the server close the client's idle keep-alive connection under it.
const LARGE_OUTLINE = ((): { expected: ReturnType<typeof outlineOf>['blocks'], parseMs: number } => {
  const started = performance.now()
  const expected = outlineOf(bodyParser()(LARGE), LARGE).blocks
  return { expected, parseMs: performance.now() - started }
})()
// A 200 KB body parses in a render thread in ~1 s, several on a busy machine: the time limit is not what is tested here.
const s = await startServer(t, { config, files, env: { CMS_RENDER_TIME_LIMIT_MS: '120000' } })
const cookie = await s.login()
const get = async (p: string): Promise<Response> => await s.request(API + p, { headers: { cookie } })
const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
interface Block { src: string, kind: string, depth?: number, text: string, editable: boolean }
const blocks = async (query = 'collection=posts&id=hello&field=body'): Promise<{ revision: number, blocks: Block[] }> => {
  const res = await get(`/blocks?${query}`)
  t.equal(res.status, 200, `/blocks?${query}`)
  return await res.json() as { revision: number, blocks: Block[] }
}
const draftBody = async (id = 'hello', collection = 'posts'): Promise<string | undefined> => {
  const entry = (await (await get(`/entries?collection=${collection}&id=${encodeURIComponent(id)}`)).json()).entries[0]
  return entry?.data?.body
}
const draftRefs = (): string => git(s.repoDir, 'for-each-ref', 'refs/cms/drafts/')
const edit = (src: string, before: string, after: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'md_edit', collection: 'posts', id: 'hello', field: 'body', src, before, after, ...extra })
const reset = async (): Promise<void> => {
  await s.request(`${API}/draft`, { method: 'DELETE', headers: writeHeaders(cookie), body: '{}' })
}

t.test('GET /blocks lists every block with its kind, text and hint', async t => {
  const { revision, blocks: list } = await blocks()
  t.equal(revision, 1)
  t.same(list.map(b => [b.kind, b.editable, b.text]), [
    ['heading', true, 'Getting started {#start}'],
    ['paragraph', true, 'Read the guide first, see and say "hello" -- twice.'],
    ['listItem', true, 'https://gohugo.io/documentation/'],
    ['listItem', true, 'an item with code and\u00a0more'],
    ['code', false, 'let x = 1'],
    ['html', false, 'Raw HTML'],
    ['definition', false, '']
  ])
  t.equal(list[0]?.depth, 2)
  for (const b of list) {
    const [start, end] = b.src.split(':').map(Number) as [number, number]
    t.ok(BODY.slice(start, end).length > 0, `${b.src} is a range of the body`)
  }
  t.equal((await get('/blocks?collection=posts&id=nope')).status, 404)
  t.equal((await get('/blocks?collection=notes&id=a')).status, 400, 'a JSON entry has no blocks')
  t.equal((await get('/blocks?collection=posts&id=hello&field=title')).status, 400)
  t.equal((await get('/blocks?collection=posts&id=__proto__')).status, 400)
  t.equal((await s.request(`${API}/blocks?collection=posts&id=hello`)).status, 401, 'signed in only')
})

t.test('a word typed in a paragraph with a link and an image inserts only its bytes', async t => {
  t.teardown(reset)
  const para = (await blocks()).blocks[1] as Block
  const before = 'Read the guide first, see and say \u201chello\u201d \u2013 twice.'
  const res = await mutate(edit(para.src, before, before.replace('first,', 'first and foremost,')))
  t.equal(res.status, 200)
  const answer = await res.json()
  const expected = BODY.replace('first, see', 'first and foremost, see')
  t.equal(await draftBody(), expected)
  t.equal(answer.ok, true)
  t.equal(answer.revision, 2)
  t.equal(answer.block.src, answer.src)
  t.equal(answer.block.text, 'Read the guide first and foremost, see and say "hello" -- twice.')
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), SOURCE, 'the base file is untouched')
  // A second edit of the same block with the answered hint, at the typographic quotes.
  const again = await mutate(edit(answer.block.src, answer.block.text, answer.block.text.replace('"hello"', '"hello there"')))
  t.equal(again.status, 200)
  t.equal(await draftBody(), expected.replace('"hello"', '"hello there"'))
})

t.test('bold, a link, a list item and a heading', async t => {
  t.teardown(reset)
  let list = (await blocks()).blocks
  const para = list[1] as Block
  const text = para.text
  let res = await mutate(edit(para.src, text, text, { marks: [{ type: 'strong', start: text.indexOf('twice'), end: text.indexOf('twice') + 5 }] }))
  t.equal(res.status, 200)
  t.equal(await draftBody(), BODY.replace('twice.', '**twice**.'))
  list = (await blocks()).blocks
  const bold = list[1] as Block
  res = await mutate(edit(bold.src, bold.text, bold.text, { marks: [{ type: 'link', start: 0, end: 4, href: 'https://example.org/read' }] }))
  t.equal(res.status, 200)
  t.equal(await draftBody(), BODY.replace('twice.', '**twice**.').replace('Read [the', '[Read](https://example.org/read) [the'))
  // The bare URL list item of a Hugo post: the appended word stays outside the URL.
  list = (await blocks()).blocks
  const item = list[2] as Block
  res = await mutate(edit(item.src, item.text, item.text + ' zebra'))
  t.equal(res.status, 200)
  t.match(await draftBody(), /\n- https:\/\/gohugo\.io\/documentation\/ zebra\n/)
  const heading = (await blocks()).blocks[0] as Block
  // The generator's heading shows an anchor symbol the source does not have.
  res = await mutate(edit(heading.src, 'Getting started {#start}\u00b6', 'Getting well started {#start}\u00b6'))
  t.equal(res.status, 200)
  t.match(await draftBody(), /^## Getting well \*started\* \{#start\}\n/)
  const code = (await blocks()).blocks[3] as Block
  res = await mutate(edit(code.src, code.text, code.text.replace('code', 'mode')))
  t.equal(res.status, 200)
  t.match(await draftBody(), /- an item with `mode` and&nbsp;more/)
  // Publishing writes exactly those changes.
  const pub = await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: '{}' })
  t.equal(pub.status, 200)
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), SOURCE
    .replace('twice.', '**twice**.').replace('Read [the', '[Read](https://example.org/read) [the')
    .replace('documentation/\n', 'documentation/ zebra\n').replace('Getting *', 'Getting well *').replace('`code`', '`mode`'))
})

t.test('bad input changes nothing', async t => {
  t.teardown(reset)
  const { revision, blocks: list } = await blocks()
  const para = list[1] as Block
  const fingerprint = await repoFingerprint(s.repoDir)
  const refs = draftRefs()
  const fileBefore = await readFile(path.join(s.repoDir, FILE), 'utf8')
  const cases: Array<[string, Record<string, unknown>, number, RegExp?]> = [
    ['before of the wrong type', edit(para.src, 5 as unknown as string, 'x'), 400],
    ['after missing', { type: 'md_edit', collection: 'posts', id: 'hello', field: 'body', src: para.src, before: para.text }, 400],
    ['marks of the wrong shape', edit(para.src, para.text, para.text, { marks: [{ type: 'blink', start: 0, end: 1 }] }), 400],
    ['a mark beyond the text', edit(para.src, para.text, para.text, { marks: [{ type: 'em', start: 0, end: 9999 }] }), 400],
    ['a forged src', edit(para.src.replace(/:[0-9a-f]{16}$/, ':0123456789abcdef'), para.text, para.text + ' x'), 409],
    ['a src that names no block', edit('0:3:' + '0'.repeat(16), para.text, para.text + ' x'), 409],
    ['a javascript: link', edit(para.src, para.text, para.text, { marks: [{ type: 'link', start: 0, end: 4, href: 'javascript:alert(1)' }] }), 422],
    ['a link mark without href', edit(para.src, para.text, para.text, { marks: [{ type: 'link', start: 0, end: 4 }] }), 400],
    ['an oversized after', edit(para.src, para.text, 'x'.repeat(100001)), 400],
    ['__proto__ as id', { ...edit(para.src, para.text, para.text + ' x'), id: '__proto__' }, 400],
    ['../ as id', { ...edit(para.src, para.text, para.text + ' x'), id: '../hello' }, 400],
    ['a field other than body', { ...edit(para.src, para.text, para.text + ' x'), field: 'title' }, 400],
    ['an edit of generator-only text', edit(para.src, para.text + ' 1', para.text + ' 2'), 422],
    ['an edit of an autolink', edit(((await blocks()).blocks[2] as Block).src, 'https://gohugo.io/documentation/', 'https://gohugo.io/docs/'), 422],
    ['an edit of a code block', edit(((await blocks()).blocks[4] as Block).src, 'let x = 1', 'let x = 2'), 422],
    ['an unknown field', { ...edit(para.src, para.text, para.text + ' x'), html: '<b>x</b>' }, 400]
  ]
  for (const [name, body, status] of cases) {
    const res = await mutate(body)
    t.equal(res.status, status, name)
    const answer = await res.json()
    t.type(answer.error, 'string', `${name}: an error with a reason`)
    if (status === 409) t.equal(answer.currentRevision, revision, `${name}: the current revision`)
  }
  t.equal(await repoFingerprint(s.repoDir), fingerprint, 'files, refs and commits unchanged')
  t.equal(draftRefs(), refs, 'no draft ref')
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), fileBefore)
})

t.test('MDX: Markdown blocks are editable, ESM and JSX never', async t => {
  t.teardown(reset)
  const { blocks: list } = await blocks('collection=pages&id=intro')
  t.same(list.map(b => [b.kind, b.editable]), [['mdx', false], ['paragraph', true], ['mdx', false], ['heading', true], ['mdx', false]], 'a one-line component too')
  const para = list[1] as Block
  t.equal(para.text, 'Some MDX prose with inside.')
  let res = await mutate({ ...edit(para.src, 'Some MDX prose with 1 inside.', 'Some MDX prose with 1 inside, edited.'), collection: 'pages', id: 'intro' })
  t.equal(res.status, 200)
  t.equal(await draftBody('intro', 'pages'), MDX.replace('inside.', 'inside, edited.'))
  const now = (await blocks('collection=pages&id=intro')).blocks
  res = await mutate({ ...edit((now[2] as Block).src, 'Tab text', 'Tab text!'), collection: 'pages', id: 'intro' })
  t.equal(res.status, 422, 'JSX is never edited')
  const typed = await mutate({ ...edit((now[3] as Block).src, 'A heading', 'A {heading} <b>'), collection: 'pages', id: 'intro' })
  t.equal(typed.status, 200, 'braces and tags typed into MDX prose')
  t.match(await draftBody('intro', 'pages'), /\n## A \\\{heading\\\} \\<b\\>\n/)
})

t.test('MDX: /render answers the Markdown blocks with hints; ESM and expressions render nothing', async t => {
  t.teardown(reset)
  const res = await get('/render?collection=pages&id=intro&field=body')
  t.equal(res.status, 200)
  const { html } = await res.json() as { html: string }
  t.notMatch(html, /import|export|meta\.a/, 'no ESM or expression source')
  t.match(html, /<p data-cms-src="[^"]+">Some <em>MDX<\/em> prose with  inside\.<\/p>/)
  t.match(html, /<div>\s*<p>Tab text<\/p>\s*<\/div>/, 'JSX children shown, without a hint')
  const hints = [...html.matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1])
  const { blocks: list } = await blocks('collection=pages&id=intro')
  t.same(hints, list.filter(b => b.editable).map(b => b.src), 'the same blocks as /blocks lists editable')
  const saved = await mutate({ type: 'md_block', collection: 'pages', id: 'intro', blockPath: 'body', src: hints[0], html: 'Some <em>MDX</em> prose with  inside, edited.' })
  t.equal(saved.status, 400, 'md_block never drops an MDX expression it cannot see')
  t.equal(await draftBody('intro', 'pages'), MDX, 'nothing saved')
  const heading = await mutate({ type: 'md_block', collection: 'pages', id: 'intro', blockPath: 'body', src: hints[1], html: 'A heading, edited' })
  t.equal(heading.status, 200, 'md_block edits an MDX heading')
  t.equal(await draftBody('intro', 'pages'), MDX.replace('## A heading', '## A heading, edited'))
})

t.test('a body over the block-editing limit: /blocks and md_edit answer 422 limit_exceeded, nothing changes', async t => {
  const fingerprint = await repoFingerprint(s.repoDir)
  const listed = await get('/blocks?collection=posts&id=long&field=body')
  t.equal(listed.status, 422)
  t.match(await listed.json(), { code: 'limit_exceeded', limit: MAX_BLOCK_BODY_CHARS })
  const first = 'A paragraph of plain words.'
  const hint = `0:${first.length}:${createHash('sha256').update(first).digest('hex').slice(0, 16)}`
  const res = await mutate({ ...edit(hint, first, 'A paragraph of plain words, edited.'), id: 'long' })
  t.equal(res.status, 422)
  t.match(await res.json(), { code: 'limit_exceeded' })
  t.equal(await repoFingerprint(s.repoDir), fingerprint, 'files, refs and commits unchanged')
})

/** The source text a block hint names in the large body. */
function sourceOf (src: string): string {
  const [start, end] = src.split(':').map(Number) as [number, number]
  return LARGE.slice(start, end)
}

/** Runs `work` and reports the longest the event loop was held meanwhile. */
async function stallDuring (work: () => Promise<void>): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  try {
    await work()
    return histogram.max / 1e6
  } finally {
    histogram.disable()
  }
}

t.test('a 200 KB body: /blocks lists what a whole parse gives and md_edit saves a word, never holding the event loop', async t => {
  const { expected, parseMs } = LARGE_OUTLINE
  const bound = Math.max(100, parseMs / 4)
  t.comment(`the body parses in ${Math.round(parseMs)} ms here; bound ${Math.round(bound)} ms`)
  let listed: { blocks: Block[] } | undefined
  let saved: Response | undefined
  let cold: Response | undefined
  const target = expected.filter(b => b.kind === 'paragraph' && b.editable && b.text.length > 20)[200]
  if (target === undefined) throw new Error('no paragraph to edit')
  // md_block (our own renderMarkdown pages) parses the whole body too: in a render thread as well.
  const plain = expected.filter(b => b.kind === 'paragraph' && b.editable && b.text.length > 20 && !/[&<>*_`[\]\\\n]/.test(b.text) && sourceOf(b.src) === b.text)[0]
  if (plain === undefined) throw new Error('no plain paragraph to edit')
  let byBlock: Response | undefined
  let emptied: Response | undefined
  const stall = await stallDuring(async () => {
    byBlock = await mutate({ type: 'md_block', collection: 'posts', id: 'large-block', blockPath: 'body', src: plain.src, html: `${plain.text} zyxword` })
    listed = await blocks('collection=posts&id=large&field=body')
    saved = await mutate({ ...edit(target.src, target.text, target.text + ' zyxword'), id: 'large' })
    // No outline kept for this body: md_edit has it parsed in a render thread first.
    cold = await mutate({ ...edit(target.src, target.text, target.text + ' zyxword'), id: 'large-cold' })
    // A paragraph emptied leaves no node where it was: checking that takes a parse of the whole body.
    emptied = await mutate({ ...edit(plain.src, plain.text, ''), id: 'large-emptied' })
  })
  t.equal(emptied?.status, 422, 'an emptied paragraph is refused')
  t.match(await emptied?.json(), { code: 'unmappable_edit' })
  t.equal(await draftBody('large-emptied'), LARGE, 'and no draft was made')
  t.same(listed?.blocks, expected, 'the blocks of a whole parse')
  t.equal(saved?.status, 200, 'md_edit saved')
  t.equal(cold?.status, 200, 'md_edit with no outline kept saved')
  const [start, end] = target.src.split(':').map(Number) as [number, number]
  const after = LARGE.slice(0, start) + LARGE.slice(start, end) + ' zyxword' + LARGE.slice(end)
  t.equal(await draftBody('large'), after, 'only the word was added')
  t.equal(await draftBody('large-cold'), `${after}\nThe end.\n`, 'only the word was added')
  t.equal(byBlock?.status, 200, 'md_block saved')
  const [plainStart, plainEnd] = plain.src.split(':').map(Number) as [number, number]
  t.equal(await draftBody('large-block'), LARGE.slice(0, plainEnd) + ' zyxword' + LARGE.slice(plainEnd), 'md_block added only the word')
  t.equal(LARGE.slice(plainStart, plainEnd), plain.text)
  t.ok(stall < bound, `the event loop was held ${Math.round(stall)} ms at most (bound ${Math.round(bound)} ms)`)
})
