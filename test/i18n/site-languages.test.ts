/**
 * Multilingual sites end to end (CONTRACT section 15): `git cms init` on sites shaped like Google's
 * docsy-example (Hugo, a content folder per language), a Hugo site translated by file name
 * (`.fr.md`), Starlight's docs (root locale English, locales in folders, .mdx, a translation
 * missing) and a Jekyll site with a folder per locale; then the real server lists every content
 * file of every language once, with its `locale` and `translationKey`, and `translations` complete.
 */
import t from 'tap'
import { cp, readdir } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'yaml'
import { readFile } from 'node:fs/promises'
import { initSite } from '../../lib/init/init-site.js'
import { git, makeSite, startServer } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'

const FIXTURES = fromRoot('test/fixtures/')
const API = '/api/cms'

interface Expected { collection: string, locale: string, translationKey: string }
interface Listed { id: string, locale?: string, translationKey?: string, readError?: unknown, data?: Record<string, unknown> }

/** Every Markdown file below a folder, relative to the repository. */
async function markdownFiles (repo: string, folder: string): Promise<string[]> {
  const out: string[] = []
  for (const d of await readdir(path.join(repo, folder), { withFileTypes: true, recursive: true })) {
    if (d.isFile() && /\.(md|mdx)$/.test(d.name)) out.push(path.relative(repo, path.join(d.parentPath, d.name)).split(path.sep).join('/'))
  }
  return out.sort()
}

/** How each fixture's files are expected to be read: collection, locale and key by file. */
const SITES: Record<string, { content: string[], expect: (file: string) => Expected }> = {
  'i18n-docsy': {
    content: ['content'],
    expect: file => {
      const [, locale, ...rest] = file.split('/')
      const key = rest.join('/').replace(/\.md$/, '').replace(/\/index$/, '')
      return { collection: 'pages', locale: locale!, translationKey: key }
    }
  },
  'i18n-hugo-suffix': {
    content: ['content'],
    expect: file => {
      const m = /^content\/(?:(posts)\/)?(.+?)(?:\.(fr))?\.md$/.exec(file)!
      return { collection: m[1] ?? 'pages', locale: m[3] ?? 'en', translationKey: m[2]! }
    }
  },
  'i18n-starlight': {
    content: ['src/content/docs'],
    expect: file => {
      const rel = file.replace(/^src\/content\/docs\//, '').replace(/\.mdx?$/, '')
      const [first, ...rest] = rel.split('/')
      const inFolder = ['fr', 'es', 'pt-br'].includes(first!)
      return { collection: 'docs', locale: inFolder ? first! : 'en', translationKey: inFolder ? rest.join('/') : rel }
    }
  },
  'i18n-jekyll': {
    content: ['en', 'fr', 'de'],
    expect: file => {
      const [locale, ...rest] = file.split('/')
      return { collection: 'translated', locale: locale!, translationKey: rest.join('/').replace(/\.md$/, '') }
    }
  }
}

const figures: string[] = []

for (const [site, how] of Object.entries(SITES)) {
  t.test(`${site}: every file of every language listed once, with its locale and key`, async t => {
    const repo = await makeSite(t, {}, { fixtures: false, commit: false })
    await cp(path.join(FIXTURES, site), repo, { recursive: true })
    const init = await initSite({ repoDir: repo, force: false })
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', site)
    const config = parse(await readFile(path.join(repo, 'cms.config.yaml'), 'utf8')) as { collections: Record<string, { i18n?: unknown }> }
    const s = await startServer(t, { repoDir: repo })
    const cookie = await s.login()
    const get = async (q: string): Promise<{ status: number, body: any }> => {
      const res = await s.request(`${API}/entries?${q}`, { headers: { cookie } })
      return { status: res.status, body: await res.json() }
    }
    // What serve lists, collection by collection, against init's counts.
    let served = 0
    const listed = new Map<string, Listed & { collection: string }>()
    for (const plan of init.inferred.collections) {
      const { status, body } = await get(`collection=${plan.name}&pageSize=100`)
      t.equal(status, 200, `${plan.name} listed`)
      t.equal(body.pagination.total, plan.entries.length, `${plan.name}: init counted ${plan.entries.length}, serve lists ${body.pagination.total}`)
      served += body.pagination.total as number
      for (const e of body.entries as Listed[]) listed.set(`${plan.name}\0${e.id}`, { ...e, collection: plan.name })
    }
    const announced = init.inferred.collections.reduce((n, c) => n + c.entries.length, 0)
    t.equal(announced, served, 'init counts equal what serve lists')

    // Every content file of every language: once, in the right collection, locale and key.
    const files = (await Promise.all(how.content.map(async folder => await markdownFiles(repo, folder)))).flat()
    let right = 0
    const seen = new Set<string>()
    for (const file of files) {
      const want = how.expect(file)
      const match = [...listed.values()].filter(e => e.collection === want.collection && e.locale === want.locale && e.translationKey === want.translationKey)
      if (match.length === 1 && match[0]!.readError === undefined && !seen.has(match[0]!.id)) { right++; seen.add(match[0]!.id) } else t.fail(`${file}: ${JSON.stringify(want)} listed ${match.length} times`)
    }
    t.equal(right, files.length, 'each file listed once with its locale and translationKey')

    // translations: each entry's single read names every translation that exists.
    let complete = 0
    let total = 0
    for (const e of listed.values()) {
      if (config.collections[e.collection]?.i18n === undefined) continue
      total++
      const { status, body } = await get(`collection=${e.collection}&id=${encodeURIComponent(e.id)}`)
      t.equal(status, 200)
      const expected = Object.fromEntries([...listed.values()].filter(o => o.collection === e.collection && o.translationKey === e.translationKey).map(o => [o.locale, o.id]))
      if (JSON.stringify(Object.entries(body.entries[0].translations).sort()) === JSON.stringify(Object.entries(expected).sort())) complete++
      else t.fail(`${e.id}: translations ${JSON.stringify(body.entries[0].translations)}, expected ${JSON.stringify(expected)}`)
    }
    t.equal(complete, total, 'translations complete')
    const line = `${site}: ${right}/${files.length} content files listed once with locale and translationKey; translations complete ${complete}/${total}; init announced ${announced}, serve lists ${served}`
    figures.push(line)
    t.comment(line)
  })
}

t.teardown(() => { for (const line of figures) console.log(`# figure: ${line}`) })
