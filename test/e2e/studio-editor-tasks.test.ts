/**
 * The Studio's editor tasks on the bundled demo site (fixtures-repo, as `npm start` serves it), in
 * Chromium, each timed and its steps printed: create a post with an image ("New", title first, the
 * id derived, required fields checked in the form, a taken id answered with a free one); one draft
 * model (an in-place draft then a Studio save by the same named editor: no conflict; Publish and
 * Discard draft); resolve a conflict field by field; history in words with a word diff far down
 * the body, and restore; a relation picker (the form flags an id that names no entry, the server
 * answers 400); search everything; tags as chips; a hostile name at sign-in. The repository (files,
 * refs, commits) is checked after each save, publish, discard, conflict resolution and restore.
 * Translating a page is timed in studio-languages.test.ts.
 */
import t from 'tap'
import { readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import matter from 'gray-matter'
import type { Page } from 'playwright-core'
import { startServer, TEST_PASSWORD, writeHeaders, git, type TestServer } from '../helpers/site.js'
import { hasChromium, launchBrowser, screenshot, ensureBrowserBundle } from '../helpers/browser.js'
import { makePng } from '../helpers/png.js'
import { editorTask as task, refsOf as refsIn } from '../helpers/studio-task.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'
import { editorIdForName, cleanEditorName, isSafeIdentityId } from '../../lib/auth/identity.js'

const API = '/api/cms'
const NAME = 'Maria Ortiz'

/** @returns the front matter and body of a file of the repository */
async function read (s: TestServer, rel: string): Promise<{ data: Record<string, unknown>, body: string }> {
  const m = matter(await readFile(path.join(s.repoDir, rel), 'utf8'))
  return { data: m.data, body: m.content }
}

/** Signs in over the API with a name; the cookie pair. */
async function apiLogin (s: TestServer, name: string): Promise<string> {
  const res = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: TEST_PASSWORD, name }) })
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
}

/** @returns the refs of the test server's repository */
const refsOf = (s: TestServer): ReturnType<typeof refsIn> => refsIn(s.repoDir)

/** @returns the named editor's drafts, as `<collection>/<id>` */
const draftsOf = async (s: TestServer, name = NAME): Promise<string[]> => (await s.services.drafts.keys(editorIdForName(name))).map(k => `${k.collection}/${k.id}`)

if (!hasChromium()) {
  t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
} else {
  ensureBrowserBundle('studio')

  t.test('editor tasks on the demo site', async t => {
    const s = await startServer(t)
    const head = git(s.repoDir, 'rev-parse', 'HEAD').trim()
    const browser = await launchBrowser(t)
    const page: Page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    page.on('pageerror', err => { t.fail(`page error: ${err.message}`) })

    // Sign in: the password field has focus; a name gives a stable editor id.
    await page.goto(`${s.url}/admin`)
    await page.getByLabel('Password').waitFor()
    t.equal(await page.evaluate('document.activeElement?.id'), 'password', 'the password field has focus')
    await page.keyboard.type(TEST_PASSWORD)
    await page.getByLabel('Your name').fill(NAME)
    await screenshot(page, 'studio-signin-name')
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    await page.getByText(NAME).waitFor()

    await t.test('create a post with an image', async t => {
      const tk = task('create a post with an image')
      await page.getByRole('link', { name: /Posts/ }).first().click()
      await page.getByRole('heading', { name: /Posts/ }).waitFor()
      tk.step('open Posts')
      await page.getByRole('button', { name: 'New Posts' }).click()
      tk.step('press "New Posts"')
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'f-title')
      t.pass('the title field has focus')
      // Required fields are checked before anything is sent.
      await page.getByRole('button', { name: 'Create' }).click()
      await page.locator('#f-title-issue').waitFor()
      t.match(await page.locator('#f-title-issue').textContent(), /Fill in Title/)
      t.equal(git(s.repoDir, 'status', '--porcelain', 'content'), '', 'nothing written')
      await page.locator('#new-entry').getByLabel('Title').fill('Bakery window')
      tk.step('type the title "Bakery window"')
      t.equal(await page.getByLabel('Id (file name)').inputValue(), 'bakery-window', 'the id is derived from the title')
      t.equal(await page.locator('#new-entry [role=alert]').count(), 0, 'the messages of the empty form are gone once the title gives an id')
      await page.getByLabel('Upload Cover image').setInputFiles({ name: 'window.png', mimeType: 'image/png', buffer: makePng(4, 3, 90) })
      await page.getByText('Uploaded.').waitFor()
      tk.step('upload a cover image')
      await page.getByLabel('Cover image description').fill('Loaves in a bakery window')
      tk.step('describe the image')
      await screenshot(page, 'studio-new-entry')
      await page.getByRole('button', { name: 'Create' }).click()
      tk.step('press Create')
      await page.locator('h1', { hasText: 'Bakery window' }).or(page.locator('#new-entry [role=alert]')).first().waitFor()
      t.equal(await page.locator('#new-entry [role=alert]').count(), 0, (await page.locator('#new-entry [role=alert]').allTextContents()).join(' | ') || 'no alert')
      t.match(new URL(page.url()).pathname, '/admin/cms/posts/bakery-window')
      const created = await read(s, 'content/posts/bakery-window.md')
      t.equal(created.data.title, 'Bakery window')
      t.match(created.data.cover, /^\/uploads\/\d{4}\/\d{2}\/window-[0-9a-f]{8}\.png$/)
      t.ok((await stat(path.join(s.repoDir, 'public', created.data.cover as string))).isFile(), 'the image is stored')
      t.equal(git(s.repoDir, 'rev-parse', 'HEAD').trim(), head, 'no commit (git on publish is off)')
      t.same(await draftsOf(s), [], 'no draft: the file was written')
      t.same(refsOf(s).drafts, [], 'no draft ref')
      t.match(git(s.repoDir, 'status', '--porcelain', 'content/posts'), /\?\? content\/posts\/bakery-window\.md/)
      // The direct mode says so in words.
      t.match(await page.locator('#save-mode').textContent(), /writes the site's files/)
      tk.done()

      // The same title again: the id is taken, a free one is offered and used.
      await page.goto(`${s.url}/admin/cms/posts`)
      await page.getByRole('button', { name: 'New Posts' }).click()
      await page.locator('#new-entry').getByLabel('Title').fill('Bakery window')
      await page.getByRole('button', { name: 'Create' }).click()
      await page.getByText(/already exists/).waitFor()
      await page.getByRole('button', { name: 'Use “bakery-window-2”' }).click()
      t.equal(await page.getByLabel('Id (file name)').inputValue(), 'bakery-window-2')
      await page.getByRole('button', { name: 'Create' }).click()
      await page.getByRole('heading', { name: /Bakery window/ }).waitFor()
      t.equal((await read(s, 'content/posts/bakery-window-2.md')).data.title, 'Bakery window')
      t.equal((await read(s, 'content/posts/bakery-window.md')).data.cover, created.data.cover, 'the first one is untouched')
    })

    await t.test('edit and publish: one draft model', async t => {
      const tk = task('edit and publish')
      const file = 'content/posts/hello-world.md'
      const before = await readFile(path.join(s.repoDir, file), 'utf8')
      const draftRef = `refs/cms/drafts/${editorIdForName(NAME)}`
      // An in-place draft by the same editor (the same name: the same editorId).
      const cookie = await apiLogin(s, NAME)
      const body = (await read(s, file)).body
      const src = [...renderMarkdown(before.slice(before.indexOf('---', 3) + 4), { collection: 'posts', id: 'hello-world' }).matchAll(/data-cms-src="([^"]+)"/g)][0]?.[1]
      const md = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src, html: 'Welcome, edited in place.' }) })
      t.equal(md.status, 200, `in-place draft (${body.length} chars of body)`)
      await page.goto(`${s.url}/admin/cms/posts`)
      await page.locator('.entries li', { hasText: 'Hello, world' }).locator('.badge', { hasText: 'Draft' }).waitFor()
      tk.step('see "Draft" in the list')
      await page.getByRole('link', { name: 'Hello, world' }).click()
      await page.locator('h1 .badge', { hasText: 'Draft' }).waitFor()
      t.equal(await page.evaluate('document.activeElement?.tagName'), 'H1', 'focus on the heading after the page change')
      await page.getByLabel('Title').fill('Hello, bakery world')
      tk.step('change the title')
      await page.keyboard.press('Control+s')
      tk.step('press Ctrl+S')
      await page.getByText('Saved. Your draft holds the change').waitFor()
      t.equal(await page.evaluate('document.activeElement?.id'), 'save-message', 'focus on the message after the save')
      t.equal(await page.getByText(/changed by someone else/).count(), 0, 'no conflict with the editor\'s own draft')
      t.equal(await readFile(path.join(s.repoDir, file), 'utf8'), before, 'the file is untouched until Publish')
      t.same(await draftsOf(s), ['posts/hello-world'], 'the save went into the named editor\'s draft')
      t.same(refsOf(s).drafts, [draftRef], 'on the named editor\'s draft ref')
      t.match(git(s.repoDir, 'grep', '-l', 'Hello, bakery world', draftRef), /hello-world\.json$/, 'the draft ref holds the new title')
      t.equal(refsOf(s).head, head, 'no commit')
      await page.reload()
      await page.locator('h1 .badge', { hasText: 'Draft' }).waitFor()
      t.equal(await page.getByLabel('Title').inputValue(), 'Hello, bakery world', 'after a reload the form shows the draft')
      // The action bar stays on screen while the form scrolls.
      await page.mouse.wheel(0, 2000)
      await page.waitForFunction(() => (globalThis as any).scrollY > 300)
      const bar = await page.locator('.action-bar').boundingBox()
      t.ok(bar !== null && bar.y >= 0 && bar.y < 100, `the action bar stays on screen (y=${bar?.y ?? 'none'})`)
      await screenshot(page, 'studio-draft-bar')
      await page.getByRole('button', { name: 'Publish' }).click()
      tk.step('press Publish')
      await page.getByText('Published posts/hello-world.').waitFor()
      const published = await read(s, file)
      t.equal(published.data.title, 'Hello, bakery world')
      t.match(published.body, /edited in place/, 'the in-place edit is published with it')
      t.same(await draftsOf(s), [], 'the draft is consumed')
      const afterPublish = refsOf(s)
      t.same(afterPublish.drafts, [], 'the draft ref is gone')
      t.equal(afterPublish.head, head, 'no commit (git on publish is off)')
      tk.done()

      // Discard draft: a new in-place draft, then Discard on the entry; the file stays.
      const now = await readFile(path.join(s.repoDir, file), 'utf8')
      const src2 = [...renderMarkdown(published.body, { collection: 'posts', id: 'hello-world' }).matchAll(/data-cms-src="([^"]+)"/g)][0]?.[1]
      t.equal((await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src: src2, html: 'To be thrown away.' }) })).status, 200)
      await page.reload()
      page.once('dialog', d => { void d.accept() })
      await page.getByRole('button', { name: 'Discard draft' }).click()
      await page.getByText('Draft discarded.').waitFor()
      t.equal(await readFile(path.join(s.repoDir, file), 'utf8'), now, 'the file stays')
      t.same(await draftsOf(s), [], 'no draft left')
      t.same(refsOf(s).drafts, [], 'no draft ref left')
      t.equal(refsOf(s).head, head, 'no commit')
    })

    await t.test('resolve a conflict field by field', async t => {
      const tk = task('resolve a conflict field by field')
      const file = 'content/posts/writing-alt-text.md'
      await page.goto(`${s.url}/admin/cms/posts/writing-alt-text`)
      await page.getByLabel('Title').waitFor()
      // The collection's `url` pattern gives the entry's page on the site.
      const onSite = page.getByRole('link', { name: 'View on site' })
      t.equal(await onSite.getAttribute('href'), '/posts/writing-alt-text', 'View on site links the entry\'s page')
      const mineDate = '2026-03-03'
      await page.getByLabel('Title').fill('Alt text, my way')
      await page.getByLabel('Publication date').fill(mineDate)
      tk.step('change title and date')
      const refsBefore = refsOf(s)
      // Someone else saves title and the image description meanwhile.
      const other = await apiLogin(s, 'Sam')
      const cur = await (await s.request(`${API}/entries?collection=posts&id=writing-alt-text`, { headers: { cookie: other } })).json() as { entries: Array<{ revision: number, data: Record<string, unknown> }> }
      const e = cur.entries[0]!
      t.equal((await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(other), body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'writing-alt-text', data: { ...e.data, title: 'Alt text, their way', coverAlt: 'Their description' }, expectedRevision: e.revision }) })).status, 200)
      await page.getByRole('button', { name: 'Save', exact: true }).click()
      tk.step('press Save: the conflict shows both values')
      await page.getByRole('heading', { name: 'This entry was changed by someone else' }).waitFor()
      const title = page.getByRole('group', { name: 'Title' })
      await title.getByText('Alt text, their way').waitFor()
      await title.getByText('Alt text, my way').waitFor()
      await screenshot(page, 'studio-conflict-fields')
      await title.getByLabel('Take theirs').check()
      tk.step('Title: take theirs')
      t.ok(await page.getByRole('group', { name: 'Publication date' }).getByLabel('Keep mine').isChecked(), 'a field only I changed keeps mine')
      t.ok(await page.getByRole('group', { name: 'Cover image description' }).getByLabel('Take theirs').isChecked(), 'a field only they changed takes theirs')
      await page.getByRole('button', { name: 'Save my choices' }).click()
      tk.step('press "Save my choices"')
      await page.getByText('Saved.').first().waitFor()
      const saved = await read(s, file)
      t.equal(saved.data.title, 'Alt text, their way')
      t.equal(saved.data.date, mineDate)
      t.equal(saved.data.coverAlt, 'Their description')
      t.equal(await page.getByLabel('Title').inputValue(), 'Alt text, their way', 'the form shows what was written')
      const refsAfter = refsOf(s)
      t.same(refsAfter.drafts, [], 'no draft: both saves wrote the file')
      t.equal(refsAfter.head, head, 'no commit')
      t.not(refsAfter.history, refsBefore.history, 'the version replaced by the resolution is in the history')
      tk.done()
    })

    await t.test('history in words; restore an old version', async t => {
      const tk = task('restore an old version')
      const file = 'content/posts/static-sites-in-2026.md'
      const original = await read(s, file)
      // Sam makes the body long, then changes one word near its end.
      const other = await apiLogin(s, 'Sam')
      const put = async (body: string): Promise<void> => {
        const cur = await (await s.request(`${API}/entries?collection=posts&id=static-sites-in-2026`, { headers: { cookie: other } })).json() as { entries: Array<{ revision: number, data: Record<string, unknown> }> }
        t.equal((await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(other), body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'static-sites-in-2026', data: { ...cur.entries[0]!.data, body }, expectedRevision: cur.entries[0]!.revision }) })).status, 200)
      }
      const long = original.body + '\n' + 'Bread and sites both need patience and a warm oven. '.repeat(12) + 'The last loaf is rye.\n'
      await put(long)
      const restored = (await read(s, file)).body
      await put(long.replace('loaf is rye', 'loaf is CHANGEDWORD'))
      t.ok(long.indexOf('rye') > 600, 'the change is far down the body')
      await page.goto(`${s.url}/admin/cms/posts/static-sites-in-2026`)
      const item = page.locator('.history summary', { hasText: /^Edited by Sam, / }).first()
      await item.waitFor()
      await item.click()
      tk.step('open "Edited by Sam, …" in the history')
      const newest = page.locator('.history li').first()
      await newest.locator('ins', { hasText: /^CHANGEDWORD$/ }).waitFor()
      t.equal(await newest.locator('del', { hasText: /^rye$/ }).count(), 1, 'the replaced word is shown removed, alone')
      await screenshot(page, 'studio-history-words')
      const historyBefore = refsOf(s).history
      page.once('dialog', d => { void d.accept() })
      await page.locator('.history li').first().getByRole('button', { name: /Restore/ }).click()
      tk.step('press Restore')
      await page.getByText('Restored.').waitFor()
      t.equal((await read(s, file)).body, restored, 'the version before the change is back')
      t.not(refsOf(s).history, historyBefore, 'the restore is in the history too')
      t.equal(refsOf(s).head, head, 'no commit')
      tk.done()
    })

    await t.test('a relation picker stores an entry id; an unknown id is refused', async t => {
      // A developer's commit names an author that does not exist: the form says so.
      const rel = 'content/posts/drafts-and-publishing.md'
      await writeFile(path.join(s.repoDir, rel), (await readFile(path.join(s.repoDir, rel), 'utf8')).replace('author: maria', 'author: ghost'))
      git(s.repoDir, 'commit', '-q', '-m', 'A ghost author', '--', rel)
      await page.goto(`${s.url}/admin/cms/posts/drafts-and-publishing`)
      await page.getByText('There is no entry “ghost” in authors. Choose another.').waitFor()
      t.pass('the form flags an author id that names no entry')
      await page.getByLabel('Author').fill('Maria')
      await page.getByRole('button', { name: /^Choose Mar/ }).click()
      await page.getByText(/Chosen: .*\(maria\)/).waitFor()
      t.equal(await page.getByText(/There is no entry/).count(), 0, 'the message goes once a real entry is chosen')
      await page.getByLabel('Author').fill('Tom')
      await page.getByRole('button', { name: /^Choose Tom/ }).click()
      await page.getByText(/Chosen: .*\(tom\)/).waitFor()
      await page.getByRole('button', { name: 'Save', exact: true }).click()
      await page.getByText('Saved. The site\'s files were written').waitFor()
      t.pass('direct mode: the message after Save says the files were written')
      t.equal((await read(s, 'content/posts/drafts-and-publishing.md')).data.author, 'tom')
      // An id that does not exist: the server refuses (400) and nothing changes.
      const cookie = await apiLogin(s, NAME)
      const refsBefore = refsOf(s)
      const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'drafts-and-publishing', field: 'author', value: 'nobody' }) })
      t.equal(res.status, 400)
      t.match(await res.json(), { code: 'schema_validation', issues: [{ path: 'author', code: 'relation' }] })
      t.equal((await read(s, 'content/posts/drafts-and-publishing.md')).data.author, 'tom')
      t.same(refsOf(s), refsBefore, 'no ref moved')
    })

    await t.test('search everything, grouped by collection; tags as chips', async t => {
      await page.goto(`${s.url}/admin/cms`)
      await page.getByLabel('Search everything').fill('harbour')
      await page.getByRole('status').filter({ hasText: '3 matches in 2 collections.' }).waitFor()
      const groups = page.locator('.search-group')
      t.same(await groups.getByRole('heading').allTextContents(), ['Posts (2)', 'Pages (1)'], 'grouped by collection, with counts')
      for (const g of await groups.all()) t.ok(await g.locator('.snippet mark', { hasText: /^harbour$/i }).count() >= 1, 'each group shows snippets with the word marked')
      await groups.first().getByRole('link').first().click()
      await page.locator('h1').waitFor()
      t.match(new URL(page.url()).pathname, /^\/admin\/cms\/posts\//, 'a hit opens its entry')

      const file = 'content/posts/hello-world.md'
      await page.goto(`${s.url}/admin/cms/posts/hello-world`)
      const chips = page.getByRole('list', { name: 'Tags' })
      await chips.getByText('meta').waitFor()
      await page.getByRole('textbox', { name: 'Tags' }).fill('bread')
      await page.keyboard.press('Enter')
      await chips.getByText('bread').waitFor()
      await page.getByRole('button', { name: 'Remove meta' }).click()
      t.same(await chips.getByRole('listitem').allTextContents(), ['news×', 'bread×'], 'Enter adds a chip, × removes one')
      await page.keyboard.press('Meta+s')
      await page.getByText('Saved.').first().waitFor()
      t.pass('Cmd+S saves')
      t.same((await read(s, file)).data.tags, ['news', 'bread'], 'the file holds the chips as a list of strings')
    })

    await t.test('a hostile name at sign-in maps to a safe editor id, never a path', async t => {
      const hostile = '../../.git/refs/heads/main"><img src=x id=injected>'
      const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
      t.teardown(async () => { await context.close() })
      const other = await context.newPage()
      other.on('pageerror', err => { t.fail(`page error: ${err.message}`) })
      await other.goto(`${s.url}/admin`)
      await other.getByLabel('Password').fill(TEST_PASSWORD)
      await other.getByLabel('Your name').fill(hostile)
      await other.getByLabel('Password').press('Enter')
      await other.getByRole('heading', { name: 'Collections' }).waitFor()
      await other.getByText(hostile).waitFor()
      t.equal(await other.locator('#injected').count(), 0, 'the name is shown as text, not HTML')
      const session = await other.evaluate(async () => await (await fetch('/api/cms/auth/session')).json()) as { identity: { id: string } }
      t.ok(isSafeIdentityId(session.identity.id), `a safe editorId: ${session.identity.id}`)
      t.equal(session.identity.id, editorIdForName(cleanEditorName(hostile)), 'the same id for the same name')
      // A draft under that name lands on refs/cms/drafts/<that id>; nothing else moves.
      const status = git(s.repoDir, 'status', '--porcelain')
      const before = refsOf(s)
      const cookie = (await context.cookies()).map(c => `${c.name}=${c.value}`).join('; ')
      const body = (await read(s, 'content/posts/static-sites-in-2026.md')).body
      const src = [...renderMarkdown(body, { collection: 'posts', id: 'static-sites-in-2026' }).matchAll(/data-cms-src="([^"]+)"/g)][0]?.[1]
      t.equal((await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'md_block', collection: 'posts', id: 'static-sites-in-2026', blockPath: 'body', src, html: 'A draft under a hostile name.' }) })).status, 200)
      const after = refsOf(s)
      t.same(after.drafts, [...before.drafts, `refs/cms/drafts/${session.identity.id}`].sort(), 'one new draft ref, named by the safe id')
      t.ok(after.drafts.every(r => /^refs\/cms\/drafts\/[A-Za-z0-9_-]{1,64}$/.test(r)), 'every draft ref is a plain name')
      t.equal(git(s.repoDir, 'for-each-ref', '--format=%(refname)', 'refs/heads'), 'refs/heads/main', 'no branch made')
      t.equal(after.head, before.head, 'no commit')
      t.equal(git(s.repoDir, 'status', '--porcelain'), status, 'no file written')
    })
  })
}
