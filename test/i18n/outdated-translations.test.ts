/**
 * Outdated translations over HTTP on a real repository (CONTRACT section 15): a translation is
 * outdated when its source (the first locale's entry) changed in a later commit; saves count once
 * published into a commit (CMS_GIT_ON_PUBLISH), and a later committed edit of the translation clears
 * the mark. Bad ids answer as any single read does and change nothing.
 */
import t from 'tap'
import { cp } from 'node:fs/promises'
import path from 'node:path'
import { initSite } from '../../lib/init/init-site.js'
import { git, makeSite, repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'

const API = '/api/cms'

t.test('hugo suffix site: a source committed after its translation outdates it until the translation is published again', async t => {
  const repo = await makeSite(t, {}, { fixtures: false, commit: false })
  await cp(fromRoot('test/fixtures/i18n-hugo-suffix'), repo, { recursive: true })
  await initSite({ repoDir: repo, force: false })
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'site')
  const s = await startServer(t, { repoDir: repo, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const cookie = await s.login()
  const read = async (collection: string, id: string): Promise<{ status: number, body: any }> => {
    const res = await s.request(`${API}/entries?collection=${collection}&id=${encodeURIComponent(id)}`, { headers: { cookie } })
    return { status: res.status, body: await res.json() }
  }
  const post = async (route: string, body: unknown): Promise<{ status: number, body: any }> => {
    const res = await s.request(`${API}${route}`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
    return { status: res.status, body: await res.json() }
  }
  const outdated = async (id: string): Promise<string[]> => (await read('posts', id)).body.entries[0].outdatedTranslations

  t.same(await outdated('hello'), [], 'one commit: nothing outdated')
  t.same((await read('posts', 'hello')).body.entries[0].translations, { en: 'hello', fr: 'hello.fr' }, 'translations keep their shape')

  // The source is saved: not a change until it is in a commit.
  t.equal((await post('/mutate', { type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Hello again' })).status, 200)
  t.same(await outdated('hello'), [], 'an uncommitted save outdates nothing')
  const published = await post('/publish', {})
  t.equal(published.status, 200)
  t.match(git(repo, 'log', '-1', '--name-only', '--format='), 'content/posts/hello.md', 'publish committed the source')
  t.same(await outdated('hello'), ['fr'], 'the source committed after its translation: fr outdated')
  t.same(await outdated('hello.fr'), ['fr'], 'the translation\'s own read says so too')
  t.same(await outdated('_index'), [], 'other pages untouched')

  // The translation is edited: the mark stays until that edit is committed.
  t.equal((await post('/mutate', { type: 'save_field', collection: 'posts', id: 'hello.fr', field: 'title', value: 'Bonjour encore' })).status, 200)
  t.same(await outdated('hello.fr'), ['fr'], 'an uncommitted translation is still outdated')
  t.equal((await post('/publish', {})).status, 200)
  t.same(await outdated('hello.fr'), [], 'the translation committed after its source: current')

  // One commit touching both keeps them current; a commit from outside (git itself) counts too.
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'empty')
  t.same(await outdated('hello'), [], 'a commit touching neither changes nothing')
  const { writeFile, readFile } = await import('node:fs/promises')
  const source = path.join(repo, 'content/posts/hello.md')
  await writeFile(source, (await readFile(source, 'utf8')).replace('Hello again', 'Hello, world'))
  git(repo, 'commit', '-q', '-am', 'source edited outside the CMS')
  t.same(await outdated('hello'), ['fr'], 'a commit made with git itself outdates the translation')

  // A translation without a source, and one never committed: never outdated.
  t.equal((await post('/mutate', { type: 'put_entry', collection: 'posts', id: 'only-english.fr', data: { title: 'Pas encore', date: '2024-05-02', body: 'x\n' } })).status, 200)
  t.same(await outdated('only-english'), [], 'a translation never committed is not outdated')
  t.equal((await post('/mutate', { type: 'put_entry', collection: 'posts', id: 'orphan.fr', data: { title: 'Orphelin', date: '2024-05-02', body: 'x\n' } })).status, 200)
  t.equal((await post('/publish', {})).status, 200)
  const orphan = (await read('posts', 'orphan.fr')).body.entries[0]
  t.same([orphan.translations, orphan.outdatedTranslations], [{ fr: 'orphan.fr' }, []], 'no source: nothing outdated')

  // Bad ids: the errors of any single read, nothing written; lists carry no outdated marks.
  const fingerprint = await repoFingerprint(repo)
  const head = git(repo, 'rev-parse', 'HEAD')
  for (const [id, status] of [['../hello', 400], ['__proto__', 400], ['hello.de', 404], ['missing', 404]] as const) {
    const res = await read('posts', id)
    t.equal(res.status, status, `id=${id}: ${status}`)
    t.equal(res.body.entries, undefined, `id=${id}: no entry`)
  }
  const badLocale = await s.request(`${API}/entries?collection=posts&id=hello&locale=__proto__`, { headers: { cookie } })
  t.equal(badLocale.status, 400, 'a hostile locale beside id=: 400')
  t.equal(await repoFingerprint(repo), fingerprint, 'refused reads wrote nothing')
  t.equal(git(repo, 'rev-parse', 'HEAD'), head, 'and committed nothing')
  const list = await (await s.request(`${API}/entries?collection=posts`, { headers: { cookie } })).json()
  t.ok(list.entries.every((e: any) => e.outdatedTranslations === undefined && e.translations === undefined), 'lists stay without per-entry git look-ups')
})
