/**
 * GET /api/cms/render: a Markdown body rendered with source hints as the signed-in editor sees it
 * (their draft body when they have one), so pages another generator rendered, and pages reloaded
 * with drafts pending, can be edited block by block without a 409.
 */
import t, { type Test } from 'tap'
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, type TestServer } from '../helpers/site.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'

const API = '/api/cms'
const config = {
  auth: { provider: 'trusted-header' as const, idHeader: 'x-user', nameHeader: 'x-user-name' },
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } },
    notes: { format: 'json' as const }
  }
}
const BODY = '# Hello\n\nFirst *paragraph*.\n\n- one\n- two\n\nLast paragraph.\n'
const SOURCE = `---\ntitle: Hello\n---\n${BODY}`
const files = {
  'content/posts/hello.md': SOURCE,
  'content/posts/broken.md': '---\ntitle: [unclosed\n---\nBody.\n',
  'content/notes/a.json': '{"n":0}\n'
}

interface Editor {
  get: (p: string) => Promise<Response>
  render: (query: string) => Promise<Response>
  mdBlock: (src: string, html: string, id?: string) => Promise<Response>
}

function editor (s: TestServer, id: string): Editor {
  const headers = { 'x-user': id, 'x-user-name': id }
  return {
    get: async (p) => await s.request(API + p, { headers }),
    render: async (query) => await s.request(`${API}/render?${query}`, { headers }),
    mdBlock: async (src, html, id = 'hello') => await s.request(`${API}/mutate`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'x-cms-request': '1' },
      body: JSON.stringify({ type: 'md_block', collection: 'posts', id, blockPath: 'body', src, html })
    })
  }
}

const hintsOf = (html: string): string[] => [...html.matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)
const render = (body: string): string => renderMarkdown(body, { collection: 'posts', id: 'hello' })

const HOSTILE = '# Hi\n\n<img src=x onerror="alert(1)"> <a href="javascript:alert(2)">x</a>\n\n<script>alert(3)</script>\n'

/** A server of its own, for tests that change base files. */
async function setup (t: Test): Promise<{ s: TestServer, ann: Editor, bob: Editor }> {
  const s = await startServer(t, { config, files })
  return { s, ann: editor(s, 'ann'), bob: editor(s, 'bob') }
}

// Tests that write drafts only share one server; each has editors of its own (drafts are private).
/** A body with footnotes, a definition and raw HTML, saved again and again by one test. */
const NOTES = '# Notes\n\nIntro with a call[^a] and [a link][r].\n\n<details>\n<summary>More</summary>\n\n' +
  'Hidden *text*[^b].\n\n</details>\n\nMiddle paragraph.\n\n[^a]: Note a, see [r].\n\n[^b]: Note b.\n\n' +
  '[r]: https://example.com/r "R"\n\nLast paragraph[^a].\n'

const shared = startServer(t, { config, files: { ...files, 'content/posts/evil.md': `---\ntitle: Evil\n---\n${HOSTILE}`, 'content/posts/notes.md': `---\ntitle: Notes\n---\n${NOTES}` } })
async function sharedSetup (name: string): Promise<{ s: TestServer, ann: Editor, bob: Editor }> {
  const s = await shared
  return { s, ann: editor(s, `${name}-ann`), bob: editor(s, `${name}-bob`) }
}

t.test('base: the body rendered by renderMarkdown, with hints and wrapper, never cached', async t => {
  const { s, ann } = await sharedSetup('base')
  const before = await repoFingerprint(s.repoDir)
  for (const query of ['collection=posts&id=hello', 'collection=posts&id=hello&field=body']) {
    const res = await ann.render(query)
    t.equal(res.status, 200, query)
    t.equal(res.headers.get('cache-control'), 'no-store')
    t.match(res.headers.get('content-type'), /application\/json/)
    const body = await res.json() as { html: string, revision: number }
    t.same(body, { html: render(BODY), revision: 1 })
    t.match(body.html, /^<div data-cms-md="posts\/hello#body">/)
    t.equal(hintsOf(body.html).length, 5, 'heading, paragraph, two list items, paragraph')
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'a render writes nothing')
})

t.test('a body changed on disk is rendered afresh; the same body of another entry gets its own wrapper', async t => {
  const { s, ann } = await setup(t)
  t.same(await (await ann.render('collection=posts&id=hello')).json(), { html: render(BODY), revision: 1 })
  const changed = BODY.replace('Last paragraph.', 'Last paragraph, changed outside.')
  // Replaced in one step (as an editor saves): a truncate-then-write could be seen half-way by a
  // concurrent read (the search's open), which is a change of its own.
  await writeFile(path.join(s.repoDir, 'content/posts/.hello.md.tmp'), `---\ntitle: Hello\n---\n${changed}`)
  await rename(path.join(s.repoDir, 'content/posts/.hello.md.tmp'), path.join(s.repoDir, 'content/posts/hello.md'))
  t.same(await (await ann.render('collection=posts&id=hello')).json(), { html: render(changed), revision: 2 }, 'not the cached HTML')
  await writeFile(path.join(s.repoDir, 'content/posts/twin.md'), `---\ntitle: Twin\n---\n${changed}`)
  const twin = await (await ann.render('collection=posts&id=twin')).json() as { html: string }
  t.equal(twin.html, renderMarkdown(changed, { collection: 'posts', id: 'twin' }))
  t.match(twin.html, /^<div data-cms-md="posts\/twin#body">/)
})

t.test('raw HTML in the body is sanitized in the served HTML', async t => {
  const hostile = HOSTILE
  const { ann } = await sharedSetup('sanitize')
  const res = await ann.render('collection=posts&id=evil')
  t.equal(res.status, 200)
  const { html } = await res.json() as { html: string }
  t.notMatch(html, /onerror|javascript:|<script/i)
  t.equal(html, renderMarkdown(hostile, { collection: 'posts', id: 'evil' }))
})

t.test('draft: the editor gets their draft body; another editor still gets base', async t => {
  const { s, ann, bob } = await sharedSetup('draft')
  const first = hintsOf(render(BODY))[1] as string
  const saved = await ann.mdBlock(first, 'First <em>paragraph</em>, edited.')
  t.equal(saved.status, 200)
  const draftBody = BODY.replace('First *paragraph*.', 'First *paragraph*, edited.')
  const res = await ann.render('collection=posts&id=hello')
  t.equal(res.status, 200)
  t.same(await res.json(), { html: render(draftBody), revision: 2 })
  t.same(await (await bob.render('collection=posts&id=hello')).json(), { html: render(BODY), revision: 1 }, 'drafts are private')
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), SOURCE, 'base file untouched')
  const status = await (await ann.get('/draft')).json() as { count: number, entries: string[] }
  t.same(status.entries, ['posts/hello'], 'GET /draft names the drafted entries')
  t.equal(status.count, 1)
  t.same((await (await bob.get('/draft')).json() as { entries: string[] }).entries, [])
})

t.test('served hints are the ones md_block checks: a drafted block edits again without 409', async t => {
  const { s, ann } = await setup(t)
  const base = hintsOf(render(BODY))
  t.equal((await ann.mdBlock(base[1] as string, 'First <em>paragraph</em>, edited.')).status, 200)
  // The page's old hint of the edited block cannot be mapped onto the draft: 409.
  const stale = await ann.mdBlock(base[1] as string, 'First <em>paragraph</em>, stale.')
  t.equal(stale.status, 409)
  // After a reload the served hints fit the draft body: the same block, and another, edit fine.
  let served = hintsOf((await (await ann.render('collection=posts&id=hello')).json() as { html: string }).html)
  const again = await ann.mdBlock(served[1] as string, 'First <em>paragraph</em>, edited twice.')
  t.equal(again.status, 200)
  t.match(await again.json(), { ok: true, revision: 3, src: served[1] === undefined ? undefined : String })
  served = hintsOf((await (await ann.render('collection=posts&id=hello')).json() as { html: string }).html)
  const last = await ann.mdBlock(served[4] as string, 'Last paragraph, also edited.')
  t.equal(last.status, 200)
  const expected = BODY.replace('First *paragraph*.', 'First *paragraph*, edited twice.').replace('Last paragraph.', 'Last paragraph, also edited.')
  const res = await ann.render('collection=posts&id=hello')
  t.same(await res.json(), { html: render(expected), revision: 4 })
  // Publish: the file differs by exactly the typed words.
  const published = await s.request(`${API}/publish`, { method: 'POST', headers: { 'x-user': 'ann', 'x-user-name': 'ann', 'x-cms-request': '1', 'content-type': 'application/json' }, body: '{}' })
  t.equal(published.status, 200)
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), `---\ntitle: Hello\n---\n${expected}`)
})

t.test('md_block answers the saved block\'s hint in the draft body: the one the rendering gives it', async t => {
  const { ann } = await sharedSetup('src')
  const edits = ['Hello <em>there</em>', 'First paragraph, longer now.', 'one and a half', 'two', 'Last.']
  for (const [i, html] of edits.entries()) {
    const before = hintsOf((await (await ann.render('collection=posts&id=hello')).json() as { html: string }).html)
    const res = await ann.mdBlock(before[i] as string, html)
    t.equal(res.status, 200, `block ${i}`)
    const { src } = await res.json() as { src?: string }
    const after = hintsOf((await (await ann.render('collection=posts&id=hello')).json() as { html: string }).html)
    t.equal(src, after[i], `block ${i}: src is the rendered hint`)
    t.same(after.slice(0, i), before.slice(0, i), `block ${i}: the blocks before keep theirs`)
  }
  // The returned hint is accepted as it is.
  const last = await ann.render('collection=posts&id=hello')
  const src = hintsOf((await last.json() as { html: string }).html)[1] as string
  const again = await ann.mdBlock(src, 'First paragraph, once more.')
  t.equal(again.status, 200)
  const next = (await again.json() as { src: string }).src
  t.equal((await ann.mdBlock(next, 'First paragraph, and again.')).status, 200, 'the answered src edits the block again')
})

t.test('a body saved again and again is rendered as renderMarkdown renders it: footnotes, definitions, raw HTML', async t => {
  let body = NOTES
  const { ann } = await sharedSetup('notes')
  const notes = (text: string): string => renderMarkdown(text, { collection: 'posts', id: 'notes' })
  let served = await (await ann.render('collection=posts&id=notes')).json() as { html: string }
  t.equal(served.html, notes(body), 'base')
  for (let n = 1; n <= 3; n++) {
    const src = /<p data-cms-src="([^"]+)">Middle paragraph[^<]*<\/p>/.exec(served.html)?.[1] ?? ''
    const res = await ann.mdBlock(src, `Middle paragraph, saved ${n} times${'!'.repeat(n)}`, 'notes')
    t.equal(res.status, 200, `save ${n}`)
    body = body.replace(/Middle paragraph[^\n]*/, `Middle paragraph, saved ${n} times${'!'.repeat(n)}`)
    served = await (await ann.render('collection=posts&id=notes')).json() as { html: string }
    t.equal(served.html, notes(body), `render after save ${n}`)
  }
  t.match(served.html, /<section data-footnotes/)
  t.match(served.html, /<details>/)
})

t.test('refused requests: clear errors, nothing written', async t => {
  const { s, ann } = await sharedSetup('refused')
  const before = await repoFingerprint(s.repoDir)
  const signedOut = await s.request(`${API}/render?collection=posts&id=hello`)
  t.equal(signedOut.status, 401)
  t.equal(signedOut.headers.get('cache-control'), 'no-store')
  t.notMatch(await signedOut.text(), /paragraph/, 'no content leaks to a signed-out visitor')

  const cases: Array<[string, number, string]> = [
    ['id=hello', 400, 'missing collection'],
    ['collection=posts', 400, 'missing id'],
    ['collection=&id=hello', 400, 'empty collection'],
    ['collection=..%2Fposts&id=hello', 400, '../ in collection'],
    ['collection=posts&id=..%2F..%2Fetc%2Fpasswd', 400, '../ in id'],
    ['collection=posts&id=hello%00', 400, 'NUL in id'],
    ['collection=__proto__&id=hello', 400, '__proto__ collection'],
    ['collection=posts&id=__proto__', 400, '__proto__ id'],
    ['collection=posts&id=hello&field=__proto__', 400, '__proto__ field'],
    ['collection=posts&id=hello&field=body.__proto__', 400, '__proto__ inside the field path'],
    ['collection=posts&id=hello&field=constructor', 400, 'constructor field'],
    ['collection=posts&id=hello&field=', 400, 'empty field'],
    ['collection=posts&id=hello&field=body..x', 400, 'empty segment'],
    ['collection=posts&id=hello&field=title', 400, 'a field that is not Markdown'],
    ['collection=posts&id=hello&field=body.x', 400, 'a path below the body'],
    [`collection=posts&id=hello&field=${'a'.repeat(300)}`, 400, 'oversized field path'],
    ['collection=posts&collection=notes&id=hello', 400, 'collection given twice (an array)'],
    ['collection=posts&id=hello&id=other', 400, 'id given twice'],
    ['collection=posts&id=hello&field=body&field=body', 400, 'field given twice'],
    [`collection=posts&id=${'x'.repeat(5000)}`, 400, 'oversized id'],
    ['collection=notes&id=a', 400, 'a JSON collection has no Markdown body'],
    ['collection=nothing&id=hello', 404, 'unknown collection'],
    ['collection=posts&id=missing', 404, 'unknown entry'],
    ['collection=posts&id=broken', 422, 'unreadable entry']
  ]
  for (const [query, status, why] of cases) {
    const res = await ann.render(query)
    t.equal(res.status, status, `${why}: ${res.status}`)
    const body = await res.json() as { error?: unknown, html?: unknown }
    t.type(body.error, 'string', `${why}: says why`)
    t.equal(body.html, undefined, `${why}: no HTML`)
  }
  const broken = await (await ann.render('collection=posts&id=broken')).json() as { code?: string }
  t.match(broken, { error: String }, 'unreadable entry error body')

  // A query far beyond any name's length is refused before it reaches the API.
  const huge = await ann.render(`collection=posts&id=hello&field=${'b'.repeat(70_000)}`)
  t.ok(huge.status === 400 || huge.status === 414 || huge.status === 431, `oversized query refused (${huge.status})`)
  t.equal((await ann.render('collection=posts&id=hello')).status, 200, 'the server still answers')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing was written')
})

t.test('an entry the editor deleted in their draft is not found for them', async t => {
  const config2 = { ...config, permissions: { writer: ['edit' as const, 'delete' as const] } }
  const s = await startServer(t, { config: { ...config2, auth: { ...config.auth, rolesHeader: 'x-user-roles' } }, files })
  const headers = { 'x-user': 'ann', 'x-user-name': 'Ann', 'x-user-roles': 'writer' }
  const del = await s.request(`${API}/mutate`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'x-cms-request': '1' },
    body: JSON.stringify({ type: 'delete_entry', collection: 'posts', id: 'hello' })
  })
  t.equal(del.status, 200, 'a delete under a policy is a draft')
  t.equal((await s.request(`${API}/render?collection=posts&id=hello`, { headers })).status, 404)
  t.equal((await s.request(`${API}/render?collection=posts&id=hello`, { headers: { ...headers, 'x-user': 'bob' } })).status, 200, 'others still see it')
})
