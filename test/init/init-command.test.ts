/**
 * `git-cms init` over copies of the example sites: the config it writes covers every content file
 * with the right layout keys, the summary tells what it found, an existing config is never replaced
 * without --force, and bad repositories or links leaving the repository are refused or ignored.
 * A few cases spawn the real executable (exit codes, the current directory, a site end to end);
 * the others run in this process through `main`, the function bin/git-cms hands argv to, with its
 * output captured: the same parsing, refusals, summary and exit codes, without a Node start each.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, symlink, writeFile, mkdir, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parse } from 'yaml'
import { EXAMPLE_SITES, makeExampleSite, type ExampleSiteName } from '../helpers/example-site.js'
import { contentFilesOf, entriesOf, type LayoutKeys } from '../helpers/site-entries.js'
import { makeSite, repoFingerprint } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'
import { main } from '../../lib/cli.js'

const BIN = fromRoot('bin/git-cms')

interface Run { code: number, stdout: string, stderr: string }

/** Runs the command line in this process, as bin/git-cms would (argv, environment, exit code, output). */
async function cli (...args: string[]): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, process.env, { stdout: { write: (text: string) => { stdout += text } }, stderr: { write: (text: string) => { stderr += text } } })
  return { code, stdout, stderr }
}

/** Spawns the real executable. */
async function spawnCli (...args: string[]): Promise<Run> {
  return await cliIn(process.cwd(), ...args)
}

async function cliIn (cwd: string, ...args: string[]): Promise<Run> {
  return await new Promise(resolve => {
    execFile(process.execPath, [BIN, ...args], { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

type Definition = LayoutKeys & { frontmatter?: string, schema?: { required?: string[], properties?: Record<string, unknown> } }

async function readConfig (dir: string): Promise<Record<string, Definition>> {
  const config = parse(await readFile(path.join(dir, 'cms.config.yaml'), 'utf8')) as { collections: Record<string, Definition> }
  return config.collections
}

/** What each site's config must say (only the keys that decide where entries are). */
const EXPECTED: Record<ExampleSiteName, { generator: string, collections: Record<string, LayoutKeys & { frontmatter?: string }> }> = {
  hugo: {
    generator: 'Found a Hugo site (hugo.toml).',
    collections: {
      pages: { folder: 'content', format: 'md', frontmatter: 'toml' },
      post: { folder: 'content/post', format: 'md', frontmatter: 'toml', indexFile: 'index' },
      docs: { folder: 'content/docs', format: 'md', frontmatter: 'toml', nested: true },
      data: { files: ['data/authors.toml', 'data/social.toml'], format: 'toml' }
    }
  },
  jekyll: {
    generator: 'Found a Jekyll site (_config.yml).',
    collections: {
      posts: { folder: '_posts', format: 'md', frontmatter: 'yaml' },
      drafts: { folder: '_drafts', format: 'md', frontmatter: 'yaml' },
      projects: { folder: '_projects', format: 'md', frontmatter: 'yaml' },
      data: { files: ['_data/authors.json'], format: 'json' },
      'data-yaml': { files: ['_data/navigation.yml'], format: 'yaml' },
      pages: { files: ['about.md', 'index.md'], format: 'md', frontmatter: 'yaml' }
    }
  },
  astro: {
    generator: 'Found an Astro site (astro.config.mjs).',
    collections: {
      blog: { folder: 'src/content/blog', format: 'md', frontmatter: 'yaml', nested: true },
      authors: { folder: 'src/content/authors', format: 'json' }
    }
  },
  eleventy: {
    generator: 'Found an Eleventy site (.eleventy.js).',
    collections: {
      posts: { folder: 'src/posts', format: 'md', frontmatter: 'yaml' },
      pages: { folder: 'src/pages', format: 'md', frontmatter: 'yaml' },
      data: { files: ['src/_data/links.yaml'], format: 'yaml' },
      'data-json': { files: ['src/_data/site.json'], format: 'json' }
    }
  }
}

/** What only one site shows. */
const SITE_CHECKS: Partial<Record<ExampleSiteName, (t: Test, collections: Record<string, Definition>, run: Run) => void | Promise<void>>> = {
  hugo: (t, { docs, post }, run) => {
    t.same(docs?.schema?.required, ['title', 'weight'], 'all three docs pages have title and weight; only one has a date')
    t.same(post?.schema?.required, ['title'])
    t.same(post?.schema?.properties?.tags, { type: 'array', items: { type: 'string' } })
    t.same(post?.schema?.properties?.image, { type: ['string', 'null'] }, 'an empty key (image:) still takes text')
    t.same(post?.schema?.properties?.body, { type: 'string' })
    t.notOk(run.stdout.includes('archetypes'), 'archetypes/ (Go templates) is not content')
  },
  jekyll: (t, { posts }, run) => {
    t.same(posts?.schema?.required, ['date', 'tags', 'title'], 'layout is a per-page switch, never required')
    for (const name of ['_layouts', '_includes', '_sass', 'assets']) t.notOk(run.stdout.includes(name), `${name} is not content`)
  },
  astro: (t, { blog }, run) => {
    t.same(blog?.schema?.required, ['description', 'pubDate', 'title'], '.md and .mdx posts together')
    for (const name of ['components', 'layouts', 'pages']) t.notOk(run.stdout.includes(`src/${name}`), `src/${name} is not content`)
  },
  eleventy: (t, _collections, run) => {
    for (const name of ['_includes', 'assets']) t.notOk(run.stdout.includes(`src/${name}`), `src/${name} is not content`)
  }
}

// The four sites are copied and initialised at once (each is its own process); the tests below read the results.
const initialised = new Map(EXAMPLE_SITES.map(site => [site, (async () => {
  const dir = await makeExampleSite(t, site)
  // One site through the real executable, end to end; the others in this process.
  return { dir, run: site === 'hugo' ? await spawnCli('init', '--repo', dir) : await cli('init', '--repo', dir) }
})()]))

for (const site of EXAMPLE_SITES) {
  t.test(`${site}: init writes a config whose collections hold every content file`, async t => {
    const { dir, run } = await initialised.get(site)!
    t.equal(run.code, 0, run.stderr)
    const collections = await readConfig(dir)
    t.same(Object.keys(collections).sort(), Object.keys(EXPECTED[site].collections).sort(), 'one collection per content folder and format')
    const covered: string[] = []
    for (const [name, expected] of Object.entries(EXPECTED[site].collections)) {
      const def = collections[name]
      if (def === undefined) continue
      t.same({ folder: def.folder, files: def.files, format: def.format, frontmatter: def.frontmatter, nested: def.nested, indexFile: def.indexFile }, {
        folder: expected.folder, files: expected.files, format: expected.format, frontmatter: expected.frontmatter, nested: expected.nested, indexFile: expected.indexFile
      }, `${name}: layout keys`)
      t.match(name, /^[a-z0-9][a-z0-9_-]{0,63}$/)
      const entries = await entriesOf(dir, def)
      covered.push(...entries.values())
      const count = entries.size
      t.match(run.stdout, new RegExp(`^  ${name.replace('-', '\\-')} .* ${count} ${count === 1 ? 'entry' : 'entries'}$`, 'm'), `${name}: summary line with ${count}`)
      t.equal(def.schema?.properties !== undefined, true, `${name}: has an inferred schema`)
    }
    t.same(covered.sort(), await contentFilesOf(site, dir), 'every content file is an entry of exactly one collection')
    t.equal(new Set(covered).size, covered.length, 'no file is in two collections')
    t.ok(run.stdout.startsWith(EXPECTED[site].generator + '\n'), run.stdout)
    t.match(run.stdout, /Wrote cms\.config\.yaml\./)
    t.notMatch(run.stdout, /Could not read/, 'every file is readable (Jekyll\'s flow list closed at column 1, the CRLF post, TOML, JSON frontmatter)')
    await SITE_CHECKS[site]?.(t, collections, run)
  })
}

t.test('refuses to replace an existing config without --force, replaces it with --force', async t => {
  const dir = await makeExampleSite(t, 'astro', { 'cms.config.yaml': '# mine\ncollections: {}\n' })
  const before = await repoFingerprint(dir)
  const refused = await cli('init', '--repo', dir)
  t.equal(refused.code, 1)
  t.equal(refused.stdout, '')
  t.match(refused.stderr, /^git-cms: cms\.config\.yaml already exists; nothing was written \(run init --force/)
  t.equal(await repoFingerprint(dir), before, 'nothing changed')

  const forced = await cli('init', '--repo', dir, '--force')
  t.equal(forced.code, 0, forced.stderr)
  t.match(forced.stdout, /Wrote cms\.config\.yaml \(replaced cms\.config\.yaml\)\./)
  t.ok((await readConfig(dir)).blog, 'the new config is in place')
})

t.test('any config file counts: cms.config.json blocks init; --force replaces it by cms.config.yaml', async t => {
  const dir = await makeExampleSite(t, 'eleventy', { 'cms.config.json': '{"collections":{}}\n' })
  const before = await repoFingerprint(dir)
  const refused = await cli('init', '--repo', dir)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /cms\.config\.json already exists; nothing was written/)
  t.equal(await repoFingerprint(dir), before)
  const forced = await cli('init', '--repo', dir, '--force')
  t.equal(forced.code, 0, forced.stderr)
  await t.rejects(stat(path.join(dir, 'cms.config.json')), 'only one config may exist, so the old one is gone')
  t.ok((await readConfig(dir)).posts)
})

t.test('--repo that is not a directory, missing, or not a git repository: a clear error, nothing written', async t => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'git-cms-init-'))
  t.teardown(async () => { await rm(tmp, { recursive: true, force: true }) })
  await writeFile(path.join(tmp, 'a-file'), 'x')
  const file = await spawnCli('init', '--repo', path.join(tmp, 'a-file'))
  t.equal(file.code, 1)
  t.match(file.stderr, /a-file is not a directory\n$/)
  const missing = await cli('init', '--repo', path.join(tmp, 'missing'))
  t.equal(missing.code, 1)
  t.match(missing.stderr, /missing is not a directory\n$/)
  await mkdir(path.join(tmp, 'site/content/posts'), { recursive: true })
  await writeFile(path.join(tmp, 'site/content/posts/a.md'), '---\ntitle: A\n---\n')
  const notGit = await cli('init', '--repo', path.join(tmp, 'site'))
  t.equal(notGit.code, 1)
  t.match(notGit.stderr, /site is not a git repository \(no \.git\); run git init there first\n$/)
  await t.rejects(stat(path.join(tmp, 'site/cms.config.yaml')), 'no config written')
})

t.test('usage errors exit 2', async t => {
  const port = await spawnCli('init', '--port', '4000')
  t.equal(port.code, 2)
  t.match(port.stderr, /--port and --host are for serve and demo/)
  const force = await cli('serve', '--force')
  t.equal(force.code, 2)
  t.match(force.stderr, /--force is for init/)
})

t.test('links inside content that leave the repository are not followed', async t => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'git-cms-outside-'))
  t.teardown(async () => { await rm(outside, { recursive: true, force: true }) })
  await writeFile(path.join(outside, 'secret.md'), '+++\ntitle = "Secret"\nsecretField = "leaked"\n+++\n')
  await mkdir(path.join(outside, 'section'))
  await writeFile(path.join(outside, 'section/leak.md'), '+++\ntitle = "Leak"\nleakField = 1\n+++\n')
  const dir = await makeExampleSite(t, 'hugo')
  await symlink(path.join(outside, 'secret.md'), path.join(dir, 'content/post/secret.md'))
  await symlink(path.join(outside, 'section'), path.join(dir, 'content/leaked-section'))
  await symlink(path.join(outside, 'section'), path.join(dir, 'content/docs/leaked'))
  const run = await cli('init', '--repo', dir)
  t.equal(run.code, 0, run.stderr)
  const text = await readFile(path.join(dir, 'cms.config.yaml'), 'utf8')
  t.notMatch(text, /secretField|leakField|leaked-section/, 'nothing behind a link was read or configured')
  t.match(run.stdout, /Not followed \(symbolic links\): .*content\/docs\/leaked/)
  t.match(run.stdout, /content\/post\/secret\.md/)
  t.match(run.stdout, /^ {2}post .* 7 entries$/m, 'the linked file is not an entry')
})

t.test('a file whose frontmatter cannot be parsed is reported, and still configured', async t => {
  const dir = await makeExampleSite(t, 'astro', { 'src/content/blog/broken.md': '---\ntitle: [unclosed\n---\nBody\n' })
  const run = await cli('init', '--repo', dir)
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /Could not read 1 file \(listed as unreadable entries until fixed\):\n {2}src\/content\/blog\/broken\.md: \S/)
  t.match(run.stdout, /^ {2}blog .* 6 entries$/m)
})

t.test('a plain Markdown site (no generator), in the current directory: content/ folders become collections', async t => {
  const dir = await makeSite(t, { 'cms.config.yaml': null, 'content/notes/one.md': '---\ntitle: One\n---\n', 'content/notes/two.md': '---\ntitle: Two\n---\n' })
  const run = await cliIn(dir, 'init')
  t.equal(run.code, 0, run.stderr)
  t.match(run.stdout, /^Found plain Markdown folders\.\n/)
  const collections = await readConfig(dir)
  t.same(collections.notes?.folder, 'content/notes')
  t.match(run.stdout, /^ {2}notes .* 2 entries$/m)
})
