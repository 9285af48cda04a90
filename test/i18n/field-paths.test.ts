/**
 * save_field paths that name keys holding a dot (Starlight's i18n JSON `component.preview`, as a
 * JSON array path), and YAML folded and literal scalars keeping their style when saved.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'
import { changedLines } from '../helpers/text-diff.js'

const API = '/api/cms'
const I18N_JSON = '{\n  "component.preview": "Aperçu",\n  "search.label": "Rechercher"\n}\n'
const POST = '---\ntitle: Folded\ndescription: >-\n  A folded excerpt\n  over two lines.\nnotes: |\n  line one\n  line two\n---\nBody.\n'

t.test('a dotted key by a JSON array path; folded and literal YAML keep their style', async t => {
  const s = await startServer(t, {
    config: { collections: { i18n: { folder: 'src/content/i18n', format: 'json' }, posts: { format: 'md' } } },
    files: { 'src/content/i18n/fr.json': I18N_JSON, 'content/posts/folded.md': POST }
  })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<{ status: number, body: any }> => {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
    return { status: res.status, body: await res.json() }
  }
  const file = async (rel: string): Promise<string> => await readFile(path.join(s.repoDir, rel), 'utf8')

  const saved = await mutate({ type: 'save_field', collection: 'i18n', id: 'fr', field: '["component.preview"]', value: 'Prévisualisation' })
  t.equal(saved.status, 200)
  t.same(changedLines(I18N_JSON, await file('src/content/i18n/fr.json')), {
    removed: ['  "component.preview": "Aperçu",\n'], added: ['  "component.preview": "Prévisualisation",\n']
  }, 'the dotted key itself changed, nothing nested was added')

  const before = await repoFingerprint(s.repoDir)
  for (const field of ['["__proto__"]', '["a", -1]', '[1.5]', '[]', '["a"', '[null]']) {
    const res = await mutate({ type: 'save_field', collection: 'i18n', id: 'fr', field, value: 'x' })
    t.equal(res.status, 400, `${field}: 400`)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'refused paths wrote nothing')

  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'folded', field: 'description', value: 'A new excerpt, folded still.' })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'folded', field: 'notes', value: 'first\nsecond\nthird\n' })).status, 200)
  t.equal(await file('content/posts/folded.md'), '---\ntitle: Folded\ndescription: >-\n  A new excerpt, folded still.\nnotes: |\n  first\n  second\n  third\n---\nBody.\n', 'both keep their block style')
})
