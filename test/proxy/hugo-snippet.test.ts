/**
 * The Hugo template snippets of docs/inline-editing.md and the README, taken from those files and
 * built by Debian's hugo over test/fixtures/proxy-site/ (a leaf page, a page bundle, section pages,
 * a nested folder and the home page), served with docs/configuration.md's Hugo example config: each
 * page's `data-cms-md` names an entry `serve` lists.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openCms } from '../../lib/cms.js'
import { git, silentLogger } from '../helpers/site.js'
import { FIXTURE, hasHugo, HUGO } from '../helpers/proxy-site.js'
import { fromRoot } from '../helpers/repo-root.js'

const ROOT = fromRoot('/')

/** The lines of the first go-html-template block after a marker, without the script tag. */
async function snippet (file: string, marker: string): Promise<string> {
  const text = await readFile(path.join(ROOT, file), 'utf8')
  const from = text.indexOf(marker)
  const m = /```go-html-template\n([\s\S]*?)```/.exec(text.slice(from))
  if (from < 0 || m === null) throw new Error(`no Hugo snippet after ${marker} in ${file}`)
  return m[1]!.split('\n').filter(line => !line.includes('bootstrap.js')).join('\n')
}

async function pagesOf (dir: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'index.html') found.push(path.join(entry.parentPath, entry.name))
  }
  return found.sort()
}

if (!hasHugo()) {
  t.plan(0, 'Debian hugo is not installed at /usr/bin/hugo')
} else {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'git-cms-hugo-snippet-'))
  t.teardown(async () => { await rm(tmp, { recursive: true, force: true }) })
  const repoDir = path.join(tmp, 'site')
  await cp(FIXTURE, repoDir, { recursive: true })
  await mkdir(path.join(repoDir, 'content/posts/guides/rigging'), { recursive: true })
  await writeFile(path.join(repoDir, 'content/posts/guides/_index.md'), '---\ntitle: Guides\n---\nGuides for the quay.\n')
  await writeFile(path.join(repoDir, 'content/posts/guides/knots.md'), '---\ntitle: Knots\n---\nKnots for the quay.\n')
  await writeFile(path.join(repoDir, 'content/posts/guides/rigging/index.md'), '---\ntitle: Rigging\n---\nRigging for the quay.\n')
  // The config is docs/configuration.md's Hugo example, as written there.
  const configuration = await readFile(path.join(ROOT, 'docs/configuration.md'), 'utf8')
  const example = /```yaml\n(# Hugo:[\s\S]*?)```/.exec(configuration)
  if (example === null) throw new Error('no Hugo example in docs/configuration.md')
  await writeFile(path.join(repoDir, 'cms.config.yaml'), example[1]!)
  git(repoDir, 'init', '-q', '-b', 'main')
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-q', '-m', 'site')
  const { cms, services } = await openCms({ repoDir, env: {}, logger: silentLogger() })
  const listed = new Set<string>()
  for (const name of ['pages', 'posts']) for (const row of await (await services.content.index(name)).all()) listed.add(`${name}/${row.id}`)
  await cms.close()

  for (const [file, marker] of [['docs/inline-editing.md', '**Hugo**'], ['README.md', '## Inline editing']] as const) {
    t.test(`${file}: the Hugo snippet names the entries serve lists`, async t => {
      const template = await snippet(file, marker)
      const layouts = path.join(repoDir, 'layouts')
      const main = (body: string): string => `{{ define "main" }}${body}{{ end }}\n`
      await writeFile(path.join(layouts, '_default/single.html'), main(template))
      await writeFile(path.join(layouts, '_default/list.html'), main(template))
      // Root pages: the collection's name goes in front, as the docs say.
      await writeFile(path.join(layouts, 'index.html'), main(template.replace(/data-cms(-md)?="\{\{ \$path \}\}/g, 'data-cms$1="pages/{{ $path }}')))
      const out = path.join(tmp, `public-${path.basename(file)}`)
      execFileSync(HUGO, ['--source', repoDir, '--destination', out, '--quiet'], { stdio: 'pipe' })
      const marked: Record<string, string> = {}
      for (const page of await pagesOf(out)) {
        const m = /data-cms-md="([^"#]*)#body"/.exec(await readFile(page, 'utf8'))
        marked[path.relative(out, page)] = m?.[1] ?? '(none)'
      }
      t.same(marked, {
        'index.html': 'pages/_index',
        'posts/index.html': 'posts/_index',
        'posts/getting-started/index.html': 'posts/getting-started',
        'posts/guides/index.html': 'posts/guides/_index',
        'posts/guides/knots/index.html': 'posts/guides/knots',
        'posts/guides/rigging/index.html': 'posts/guides/rigging',
        'posts/mooring-knots/index.html': 'posts/mooring-knots',
        'posts/tide-tables/index.html': 'posts/tide-tables'
      }, 'each page names its own entry')
      for (const value of Object.values(marked)) t.ok(listed.has(value), `${value} is an entry serve lists`)
    })
  }
}
