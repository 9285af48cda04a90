/**
 * An editor's draft ref goes once it holds no draft: after a publish and after a discard (all, or
 * the last entry's), never while another draft is on it; a later draft makes it again. Refused
 * requests leave the refs as they were.
 */
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, git, repoFingerprint, writeHeaders, TEST_PASSWORD, type TestServer } from '../helpers/site.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'
import { editorIdForName } from '../../lib/auth/identity.js'
import { draftRef } from '../../lib/storage/draft-store.js'

const API = '/api/cms'
const NAME = 'Rita Refs'
const REF = draftRef(editorIdForName(NAME))

/** @returns the draft refs as `for-each-ref` lists them */
const draftRefs = (s: TestServer): string => git(s.repoDir, 'for-each-ref', '--format=%(refname)', 'refs/cms/drafts/').trim()

/** Makes an in-place draft of a post's first paragraph. */
async function draft (t: Test, s: TestServer, cookie: string, id: string, html: string): Promise<void> {
  const text = await readFile(path.join(s.repoDir, `content/posts/${id}.md`), 'utf8')
  const body = text.slice(text.indexOf('\n---', 3) + 5)
  const src = /data-cms-src="([^"]+)"/.exec(renderMarkdown(body, { collection: 'posts', id }))?.[1]
  const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'md_block', collection: 'posts', id, blockPath: 'body', src, html }) })
  t.equal(res.status, 200, `a draft of posts/${id}`)
}

t.test('the draft ref is deleted when publish or discard empties it', async t => {
  const s = await startServer(t)
  const login = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: TEST_PASSWORD, name: NAME }) })
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  t.equal(draftRefs(s), '', 'no draft ref at first')

  await t.test('publish', async t => {
    await draft(t, s, cookie, 'hello-world', 'Published from a draft.')
    t.equal(draftRefs(s), REF, 'the editor\'s ref')
    const res = await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: '{}' })
    t.equal(res.status, 200)
    t.match(await readFile(path.join(s.repoDir, 'content/posts/hello-world.md'), 'utf8'), /Published from a draft\./)
    t.equal(draftRefs(s), '', 'the emptied ref is gone after publish')
  })

  await t.test('discard one entry of two, then the other', async t => {
    await draft(t, s, cookie, 'writing-alt-text', 'Thrown away one.')
    await draft(t, s, cookie, 'editing-in-place', 'Thrown away two.')
    const files = await repoFingerprint(s.repoDir)
    const texts = async (): Promise<string[]> => await Promise.all(['writing-alt-text', 'editing-in-place'].map(async id => await readFile(path.join(s.repoDir, `content/posts/${id}.md`), 'utf8')))
    const before = await texts()
    const one = await s.request(`${API}/draft?collection=posts&id=writing-alt-text`, { method: 'DELETE', headers: writeHeaders(cookie) })
    t.same((await one.json() as { cleared: string[] }).cleared, ['posts/writing-alt-text'])
    t.equal(draftRefs(s), REF, 'the ref stays while it holds another draft')
    // Refused discards change nothing.
    const head = git(s.repoDir, 'rev-parse', REF).trim()
    for (const [query, status] of [['?id=editing-in-place', 400], ['?collection=../x', 400], ['?collection=posts&id=__proto__', 400]] as const) {
      t.equal((await s.request(`${API}/draft${query}`, { method: 'DELETE', headers: writeHeaders(cookie) })).status, status, query)
    }
    t.equal((await s.request(`${API}/draft`, { method: 'DELETE', headers: { cookie } })).status, 403, 'no CSRF header')
    t.equal(git(s.repoDir, 'rev-parse', REF).trim(), head, 'the ref is unchanged by refused discards')
    const all = await s.request(`${API}/draft`, { method: 'DELETE', headers: writeHeaders(cookie) })
    t.same((await all.json() as { cleared: string[] }).cleared, ['posts/editing-in-place'])
    t.equal(draftRefs(s), '', 'the emptied ref is gone after discard')
    t.not(await repoFingerprint(s.repoDir), files, 'the ref change shows in the repository')
    t.same(await texts(), before, 'the discarded entries\' files are untouched')
  })

  await t.test('a later draft makes the ref again', async t => {
    await draft(t, s, cookie, 'hello-world', 'Drafted again.')
    t.equal(draftRefs(s), REF)
    const status = await (await s.request(`${API}/draft`, { headers: { cookie } })).json() as { entries: string[] }
    t.same(status.entries, ['posts/hello-world'])
  })
})
