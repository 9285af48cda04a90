import t, { type Test } from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, git, type TestServer } from '../helpers/site.js'
import { renderMarkdown, sourceHash, isMarkdownDraft } from '../../lib/content/markdown/index.js'
import type { DraftRecord } from '../../lib/storage/draft-store.js'

const API = '/api/cms'
const config = {
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } },
    notes: { format: 'json' as const }
  }
}
const BODY = '# Hello\n\nFirst *paragraph*.\n\n- one\n- two\n\nLast paragraph.\n'
const files = {
  'content/posts/hello.md': `---\ntitle: Hello\n---\n${BODY}`,
  'content/notes/a.json': '{"n":0}\n'
}
const FILE = 'content/posts/hello.md'

interface Ctx { s: TestServer, cookie: string, mutate: (body: unknown) => Promise<Response>, entry: () => Promise<any> }

/**
 * The signed-in editor's stored draft of posts/hello, read from the draft store over the real
 * draft ref (the entries route does not lay drafts over base yet).
 */
async function storedDraft (s: TestServer): Promise<DraftRecord | null> {
  const refs = git(s.repoDir, 'for-each-ref', '--format=%(refname)', 'refs/cms/drafts/').split('\n').filter(Boolean)
  if (refs.length === 0) return null
  const editorId = decodeURIComponent((refs[0] as string).slice('refs/cms/drafts/'.length))
  return await s.services.drafts.get(editorId, 'posts', 'hello')
}

async function setup (t: Test): Promise<Ctx> {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const entry = async (): Promise<any> => (await (await s.request(`${API}/entries?collection=posts&id=hello`, { headers: { cookie } })).json()).entries[0]
  return { s, cookie, mutate, entry }
}

const hints = (body: string): string[] => [...renderMarkdown(body, { collection: 'posts', id: 'hello' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)
const md = (src: string, html: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'md_block', collection: 'posts', id: 'hello', blockPath: 'body', src, html, ...extra })

t.test('md_block saves a private draft; the base file does not change', async t => {
  const { s, mutate, entry } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const res = await mutate(md(hints(BODY)[1] as string, 'First <em>paragraph</em>, edited.', { expectedRevision: 1 }))
  t.equal(res.status, 200)
  t.same(await res.json(), { ok: true, revision: 2, src: hints(BODY.replace('First *paragraph*.', 'First *paragraph*, edited.'))[1] }, 'the block\'s hint in the draft body')
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), `---\ntitle: Hello\n---\n${BODY}`, 'base file untouched')
  t.equal(git(s.repoDir, 'status', '--porcelain'), '', 'working tree clean')
  t.not(await repoFingerprint(s.repoDir), before, 'the draft ref moved')
  const draft = await storedDraft(s)
  t.equal(draft?.data?.body, BODY.replace('First *paragraph*.', 'First *paragraph*, edited.'))
  t.equal(draft?.data?.title, 'Hello', 'frontmatter carried')
  t.equal(draft?.baseRevision, 1)
  t.ok(isMarkdownDraft(draft?.markdown), 'the block-edit record is stored')
  t.same((draft?.markdown as any).baseBody, BODY)
  t.equal((await entry()).data.title, 'Hello')
})

t.test('a block sent back as it renders is no edit: no draft, no new revision', async t => {
  const { s, mutate } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const res = await mutate(md(hints(BODY)[1] as string, 'First <em>paragraph</em>.', { expectedRevision: 1 }))
  t.equal(res.status, 200)
  t.same(await res.json(), { ok: true, revision: 1, src: hints(BODY)[1] })
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.equal(await storedDraft(s), null)
  const wrongRevision = await mutate(md(hints(BODY)[1] as string, 'First <em>paragraph</em>.', { expectedRevision: 7 }))
  t.equal(wrongRevision.status, 409, 'expectedRevision is still checked')
})

t.test('hostile HTML is reduced to the allowlist', async t => {
  const { s, mutate } = await setup(t)
  const html = '<a href="JaVaScRiPt&colon;alert(1)">click</a> <img src=x onerror=alert(1)><script>alert(2)</script>' +
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript> <svg><script>alert(3)</script></svg>' +
    '<a href="data:text/html,x">d</a> <a href="vbscript:x">v</a> <a href="https://ok.example">ok</a>'
  const res = await mutate(md(hints(BODY)[3] as string, html))
  t.equal(res.status, 200)
  const body = (await storedDraft(s))?.data?.body as string
  t.notMatch(body, /javascript|onerror|<script|<img|data:|vbscript|alert/i)
  t.match(body, /^- one\n- click .*d v \[ok\]\(https:\/\/ok\.example\)\n/m)
  t.ok(body.startsWith('# Hello\n\nFirst *paragraph*.\n\n'), 'the rest is untouched')
})

t.test('stale and forged hints are 409 with currentRevision; nothing changes', async t => {
  const { s, mutate } = await setup(t)
  const good = hints(BODY)[1] as string
  const [start, end] = good.split(':').map(Number) as [number, number]
  const before = await repoFingerprint(s.repoDir)
  for (const src of [
    `${start}:${end}:0000000000000000`,
    `${start}:${BODY.length + 10}:${sourceHash(BODY.slice(start))}`,
    `${start + 1}:${end}:${sourceHash(BODY.slice(start + 1, end))}`
  ]) {
    const res = await mutate(md(src, 'x'))
    t.equal(res.status, 409, src)
    const json = await res.json()
    t.equal(json.currentRevision, 1, src)
  }
  for (const src of ['-1:5:0123456789abcdef', 'a:b:0123456789abcdef', '1:2']) {
    const res = await mutate(md(src, 'x'))
    t.equal(res.status, 409, src)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  // the hint goes stale once the body changes under it
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'body', value: 'New.\n' })).status, 200)
  const stale = await mutate(md(good, 'x'))
  t.equal(stale.status, 409)
  t.equal((await stale.json()).currentRevision, 2)
})

t.test('wrong collection kind, missing entry, bad blockPath', async t => {
  const { s, mutate } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const notMd = await mutate({ type: 'md_block', collection: 'notes', id: 'a', blockPath: 'body', src: '0:1:0123456789abcdef', html: 'x' })
  t.equal(notMd.status, 400)
  const missing = await mutate({ type: 'md_block', collection: 'posts', id: 'nope', blockPath: 'body', src: '0:1:0123456789abcdef', html: 'x' })
  t.equal(missing.status, 404)
  const noCollection = await mutate({ type: 'md_block', collection: 'ghosts', id: 'x', blockPath: 'body', src: '0:1:0123456789abcdef', html: 'x' })
  t.equal(noCollection.status, 404)
  t.equal((await mutate(md(hints(BODY)[1] as string, 'x', { blockPath: 'summary' }))).status, 400)
  t.equal((await mutate(md(hints(BODY)[1] as string, 'x', { id: '../etc' }))).status, 400)
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
})

t.test('two concurrent edits of two blocks are both kept; later hints come from the draft body', async t => {
  const { s, mutate } = await setup(t)
  const h = hints(BODY)
  const [a, b] = await Promise.all([
    mutate(md(h[1] as string, 'First, edited by A.')),
    mutate(md(h[4] as string, 'Last, edited by B.'))
  ])
  t.equal(a.status, 200)
  t.equal(b.status, 200)
  const body = (await storedDraft(s))?.data?.body as string
  t.equal(body, '# Hello\n\nFirst, edited by A.\n\n- one\n- two\n\nLast, edited by B.\n')
  // a hint of an already edited block, rendered from the base, is stale
  const again = await mutate(md(h[1] as string, 'First, edited again.'))
  t.equal(again.status, 409)
  t.equal((await again.json()).currentRevision, 3)
  // a third edit with a hint rendered from the draft body
  const res = await mutate(md(hints(body)[2] as string, 'uno'))
  t.equal(res.status, 200)
  const draft = await storedDraft(s)
  t.ok(isMarkdownDraft(draft?.markdown))
  t.equal((draft?.markdown as any).edits.length, 3, 'three separate edits recorded')
  t.equal(draft?.data?.body, '# Hello\n\nFirst, edited by A.\n\n- uno\n- two\n\nLast, edited by B.\n')
})

t.test('publish merges block edits onto a base changed elsewhere, and refuses a change inside', async t => {
  const { s, cookie, mutate } = await setup(t)
  t.equal((await mutate(md(hints(BODY)[4] as string, 'Last, edited.'))).status, 200)
  // the base changes outside the edited block, by hand
  const file = path.join(s.repoDir, FILE)
  await writeFile(file, (await readFile(file, 'utf8')).replace('# Hello', '# Hello there'))
  const res = await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: '{}' })
  t.equal(res.status, 200)
  const pub = await res.json()
  t.same(pub.conflicts, [])
  t.equal(await readFile(file, 'utf8'), '---\ntitle: Hello\n---\n# Hello there\n\nFirst *paragraph*.\n\n- one\n- two\n\nLast, edited.\n')

  const body2 = '# Hello there\n\nFirst *paragraph*.\n\n- one\n- two\n\nLast, edited.\n'
  t.equal((await mutate(md(hints(body2)[1] as string, 'First, mine.'))).status, 200)
  await writeFile(file, (await readFile(file, 'utf8')).replace('First *paragraph*.', 'First, theirs.'))
  const pub2 = await (await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: '{}' })).json()
  t.equal(pub2.conflicts.length, 1)
  t.equal(pub2.conflicts[0].code, 'stale_body')
  t.match(await readFile(file, 'utf8'), /First, theirs\./, 'not partially published')
})
