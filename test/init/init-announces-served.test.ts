/**
 * What `git cms init` announces is what `serve` lists, on sites shaped like real ones: a Hugo site
 * with its config split in `config/_default/` (config, params, menus, languages, markup) and
 * taxonomy pages (Stack's starter), and an Astro site (content config with `glob()` bases, a
 * Markdown page in src/pages). Config files are never content; taxonomy and term pages
 * (`content/<taxonomy>/_index.md`, `content/<taxonomy>/<term>/_index.md`) are entries of a
 * collection per taxonomy, since Hugo renders their title, description and body.
 */
import t from 'tap'
import { cp } from 'node:fs/promises'
import path from 'node:path'
import { initSite, formatInitSummary } from '../../lib/init/init-site.js'
import { idOfPath } from '../../lib/storage/entry-paths.js'
import { git, makeSite, startServer } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'

const SITES = {
  'init-hugo-stack': {
    collections: {
      pages: ['_index'],
      categories: ['_index', 'example-category/_index', '教程/_index'],
      page: ['archives', 'search'],
      post: ['2024-4-13', 'hello-world', 'image-gallery'],
      tags: ['_index'],
      data: ['authors']
    }
  },
  'init-astro': {
    collections: {
      blog: ['2024/launch', 'first-post', 'using-mdx'],
      team: ['ada', 'grace'],
      pages: ['about']
    }
  }
} as const

for (const [fixture, expected] of Object.entries(SITES)) {
  t.test(`${fixture}: every entry init announces is listed by serve, and nothing else`, async t => {
    const repo = await makeSite(t, {}, { fixtures: false, commit: false })
    await cp(fromRoot(`test/fixtures/${fixture}`), repo, { recursive: true })
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', fixture)
    const result = await initSite({ repoDir: repo, force: false })
    git(repo, 'add', 'cms.config.yaml')
    git(repo, 'commit', '-q', '-m', 'git cms init')
    const summary = formatInitSummary(result)
    const announcedFiles = result.inferred.collections.flatMap(c => c.entries)
    t.same(announcedFiles.filter(f => f.startsWith('config/') || /(^|\/)(astro|hugo)\.config\./.test(f)), [], 'no config file is announced as content')
    t.same(result.inferred.unreadable, [], 'everything announced is readable')

    const s = await startServer(t, { repoDir: repo })
    const cookie = await s.login()
    const served: Record<string, string[]> = {}
    let servedTotal = 0
    for (const plan of result.inferred.collections) {
      const res = await s.request(`/api/cms/entries?collection=${encodeURIComponent(plan.name)}&pageSize=100`, { headers: { cookie } })
      t.equal(res.status, 200, `${plan.name}: listed`)
      const body = await res.json() as { entries: Array<{ id: string, readError?: unknown }>, pagination: { total: number } }
      served[plan.name] = body.entries.map(e => e.id).sort()
      servedTotal += body.pagination.total
      const layout = { dir: repo, format: plan.format, nested: true, indexFile: plan.indexFile, files: null }
      const announced = plan.entries.map(f => plan.folder === null ? path.posix.basename(f, path.posix.extname(f)) : idOfPath(layout, path.posix.relative(plan.folder, f))).sort()
      t.same(served[plan.name], announced, `${plan.name}: serve lists exactly the ${announced.length} entries init announced`)
      t.match(summary, new RegExp(`\\b${plan.name}\\b.*\\b${body.pagination.total} entr(y|ies)\\n`), `${plan.name}: the printed count is serve's`)
      t.ok(body.entries.every(e => e.readError === undefined), `${plan.name}: every entry readable`)
    }
    t.same(served, Object.fromEntries(Object.entries(expected.collections).map(([k, v]) => [k, [...v].sort()])), 'the collections and ids a reader of the generator\'s docs expects')
    t.comment(`figure: ${fixture}: init announced ${announcedFiles.length} entries, serve lists ${servedTotal}`)
  })
}
