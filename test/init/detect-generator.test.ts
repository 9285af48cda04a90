/**
 * Generator detection and collection planning on small real repositories (in process, no server):
 * the less common config shapes (Astro glob() bases, Jekyll collections_dir, Eleventy input ".")
 * and hostile folder names in a site's own config, which must never lead outside the repository.
 */
import t, { type Test } from 'tap'
import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { detectGenerator } from '../../lib/init/detect-generator.js'
import { inferCollections } from '../../lib/init/infer-collections.js'
import { makeSite } from '../helpers/site.js'

const md = (title: string): string => `---\ntitle: ${title}\n---\nBody\n`

async function plan (t: Test, files: Record<string, string>): Promise<{ generator: string, notes: string[], collections: Record<string, { folder: string | null, files: string[] | null, format: string, nested: boolean, entries: string[] }> }> {
  const dir = await makeSite(t, files, { fixtures: false, commit: false })
  const site = await detectGenerator(dir)
  const inferred = await inferCollections(dir, site.sources)
  return { generator: site.generator, notes: site.notes, collections: Object.fromEntries(inferred.collections.map(c => [c.name, c])) }
}

t.test('Astro 5: glob() bases of src/content.config.ts are collections; a declared one without files is a note', async t => {
  const { generator, notes, collections } = await plan(t, {
    'astro.config.mjs': "export default {}\n",
    'src/content.config.ts': [
      "import { defineCollection, z } from 'astro:content';",
      "import { glob } from 'astro/loaders';",
      "const blog = defineCollection({ loader: glob({ pattern: '**/*.{md,mdx}', base: './src/data/blog' }), schema: z.object({ title: z.string() }) });",
      "const notes = defineCollection({ loader: glob({ pattern: '*.md', base: \"./src/data/notes\" }) });",
      "export const collections = { blog, 'release-notes': notes };"
    ].join('\n'),
    'src/data/blog/one.md': md('One'),
    'src/data/blog/2024/two.md': md('Two'),
    'src/components/Note.md': md('not content')
  })
  t.equal(generator, 'astro')
  t.same(Object.keys(collections), ['blog'])
  t.same(collections.blog?.folder, 'src/data/blog')
  t.equal(collections.blog?.nested, true)
  t.match(notes, [/declares the collection 'release-notes' but no folder/])
})

t.test('Jekyll: collections_dir, a list of collections, exclude, and other page folders', async t => {
  const { generator, collections } = await plan(t, {
    '_config.yml': 'collections_dir: my_collections\ncollections: [recipes]\nexclude: [docs]\n',
    'my_collections/_posts/2024-01-01-a.md': md('A'),
    'my_collections/_recipes/bread.md': md('Bread'),
    'docs/internal.md': md('excluded'),
    'blog/hello.md': md('Hello'),
    'README.md': '# repo readme\n',
    'about.md': md('About')
  })
  t.equal(generator, 'jekyll')
  t.same(collections.posts?.folder, 'my_collections/_posts')
  t.same(collections.recipes?.folder, 'my_collections/_recipes')
  t.same(collections.blog?.folder, 'blog')
  t.same(collections.pages?.files, ['about.md'], 'README.md at the root is the repository\'s, not a page')
  t.notOk(Object.values(collections).some(c => c.folder === 'docs'), 'an excluded folder is not content')
})

t.test('Eleventy with input "." and an ESM config', async t => {
  const { generator, collections } = await plan(t, {
    'eleventy.config.mjs': 'export default function (config) {\n  return { dir: { input: ".", output: "dist" } }\n}\n',
    'index.md': md('Home'),
    'blog/a.md': md('A'),
    'blog/blog.11tydata.json': '{"layout":"post"}\n',
    'dist/blog/a/index.html': '<p>built</p>\n',
    '_includes/base.njk': '{{ content }}\n'
  })
  t.equal(generator, 'eleventy')
  t.same(collections.pages?.files, ['index.md'])
  t.same(collections.blog?.entries, ['blog/a.md'], 'the directory data file is not an entry')
  t.notOk(Object.values(collections).some(c => c.folder === 'dist'), 'the output folder is not content')
})

t.test('config.toml alone is not Hugo; a Hugo contentDir leaving the repository is ignored', async t => {
  const plain = await plan(t, { 'config.toml': 'a = 1\n', 'notes/a.md': md('A') })
  t.equal(plain.generator, 'markdown')
  t.same(plain.collections.notes?.folder, 'notes')

  const hostile = await plan(t, {
    'hugo.toml': 'contentDir = "../../etc"\ndataDir = "/etc"\n',
    'content/post/a.md': md('A')
  })
  t.equal(hostile.generator, 'hugo')
  t.same(Object.values(hostile.collections).map(c => c.folder), ['content/post'])

  const custom = await plan(t, { 'hugo.toml': 'contentDir = "site-content"\n', 'site-content/blog/a.md': md('A') })
  t.same(custom.collections.blog?.folder, 'site-content/blog')
})

t.test('Jekyll folders named in _config.yml never leave the repository', async t => {
  const { collections } = await plan(t, {
    '_config.yml': 'source: /etc\ncollections_dir: ../..\ndata_dir: ../secrets\ncollections:\n  "../../x": {}\n  __proto__: {}\n',
    '_posts/2024-01-01-a.md': md('A')
  })
  t.same(Object.values(collections).map(c => c.folder ?? c.files), ['_posts'])
})

t.test('collection names: folder names made valid and unique', async t => {
  const { collections } = await plan(t, {
    'content/_My Posts!/a.md': md('A'),
    'content/my-posts/b.md': md('B'),
    'content/Über/c.md': md('C')
  })
  t.same(Object.keys(collections).sort(), ['my-posts', 'my-posts-2', 'uber'])
  for (const name of Object.keys(collections)) t.match(name, /^[a-z0-9][a-z0-9_-]{0,63}$/)
})

t.test('file names that cannot be entry ids are named; real-world names are ids', async t => {
  const dir = await makeSite(t, {
    'content/notes/v1.2-notes.md': md('v1.2'),
    "content/notes/what's new.md": md('New'),
    'content/notes/Markdown Syntax.md': md('Syntax'),
    'content/notes/-draft.md': md('Draft'),
    'content/notes/note .md': md('Trailing space'),
    'content/notes/a:b.md': md('Colon')
  }, { fixtures: false, commit: false })
  const inferred = await inferCollections(dir, (await detectGenerator(dir)).sources)
  t.same(inferred.badNames.map(b => b.path).sort(), ['content/notes/-draft.md', 'content/notes/a:b.md', 'content/notes/note .md'])
  t.equal(inferred.collections[0]?.entries.length, 6, 'still configured: the service lists them')
})

t.test('a content folder that is itself a link, or lies behind one, is reported and not read', async t => {
  const outside = await makeSite(t, { 'post/secret.md': md('Secret') }, { fixtures: false, commit: false })
  const dir = await makeSite(t, { 'hugo.toml': 'title = "x"\n', 'content/docs/a.md': md('A') }, { fixtures: false, commit: false })
  await symlink(path.join(outside, 'post'), path.join(dir, 'content/post'))
  await symlink(outside, path.join(dir, 'src'))
  const astroLike = await inferCollections(dir, [{ folder: 'src/post', name: 'post', kind: 'folder', recursive: true, pagesOnly: false }])
  t.same(astroLike.collections, [])
  t.same(astroLike.links, ['src/post'])
  const inferred = await inferCollections(dir, (await detectGenerator(dir)).sources)
  t.same(inferred.collections.map(c => c.folder), ['content/docs'])
  t.ok(inferred.links.includes('content/post'), 'the linked section is named')
})

t.test('one Markdown collection for .md and .mdx together, named after the most used; data beside it apart', async t => {
  const { collections } = await plan(t, {
    'astro.config.mjs': 'export default {}\n',
    'src/content/docs/a.mdx': md('A'),
    'src/content/docs/b.mdx': md('B'),
    'src/content/docs/c.md': md('C'),
    'src/content/docs/d/index.mdx': md('D'),
    'src/content/docs/d/diagram.png': 'png',
    'src/content/docs/meta.json': '{"order":["a","b"]}\n'
  })
  t.same(Object.keys(collections), ['docs', 'docs-json'])
  t.equal(collections.docs?.format, 'mdx')
  t.same(collections.docs?.entries, ['src/content/docs/a.mdx', 'src/content/docs/b.mdx', 'src/content/docs/c.md', 'src/content/docs/d/index.mdx'])
  t.same(collections['docs-json']?.entries, ['src/content/docs/meta.json'])
})
