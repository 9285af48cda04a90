import t, { type Test } from 'tap'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startServer, writeHeaders, git, type TestServer } from '../helpers/site.js'
import { changedLines } from '../helpers/text-diff.js'

const API = '/api/cms'

const config = {
  collections: {
    posts: { format: 'md' as const },
    notes: { format: 'mdx' as const },
    nav: { format: 'yaml' as const },
    social: { format: 'toml' as const },
    site: { format: 'json' as const }
  }
}

/** Real-world frontmatter and data files: comments, both quotes, flow lists, folded strings, dates, empty keys. */
const files: Record<string, string> = {
  'content/posts/jekyll-yaml.md': [
    '---',
    '# Jekyll post',
    'layout: post',
    'title:  "Welcome to Jekyll!"   # shown in the feed',
    'date:   2019-03-08 10:15:00 +0100',
    "categories: [jekyll, 'update']",
    'excerpt: >-',
    '  A folded excerpt',
    '  over two lines.',
    'image:',
    '---',
    'You’ll find this post in your `_posts` directory.',
    ''
  ].join('\n'),
  'content/posts/hugo-toml.md': [
    '+++',
    '# Hugo front matter',
    'title = "Markdown Syntax Guide"',
    'date = 2019-03-11',
    'lastmod = 2022-05-01 15:23:59',
    "tags = ['markdown', 'css']",
    '',
    '[params]',
    '  author = "Zoë"  # who',
    '+++',
    '',
    'This article offers a sample of basic Markdown syntax.',
    ''
  ].join('\n'),
  'content/posts/hugo-json.md': [
    '{',
    '    "title": "Emoji Support",',
    '    "date": "2019-03-05",',
    '    "tags": ["emoji"]',
    '}',
    '',
    'Emoji can be enabled in a Hugo project.',
    ''
  ].join('\r\n'),
  'content/notes/astro.mdx': "---\ntitle: 'Using MDX'\npubDate: 2022-07-01\n---\nimport Chart from '../components/Chart.astro'\n\n<Chart />\n",
  'content/nav/main.yml': '# Main navigation\n- title: Home\n  url: /\n\n- title: "About"\n  url: /about/\n',
  'content/social/links.toml': '# Social links\ntitle = "Links"\n\n[github]\nurl = "https://github.com/x"  # profile\nlabel = \'GitHub\'\n',
  'content/site/settings.json': '{\n    "name": "My site",\n    "menu": [ "home", "about" ],\n    "footer": { "text": "© 2024" }\n}\n'
}

interface Ctx { s: TestServer, mutate: (body: unknown) => Promise<any>, read: (c: string, id: string) => Promise<any>, file: (rel: string) => Promise<string>, history: (c: string, id: string) => Promise<unknown[]> }

async function setup (t: Test): Promise<Ctx> {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<any> => {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
    return { status: res.status, ...(await res.json()) }
  }
  const read = async (c: string, id: string): Promise<any> => {
    const res = await s.request(`${API}/entries?collection=${c}&id=${encodeURIComponent(id)}`, { headers: { cookie } })
    return res.status === 200 ? (await res.json()).entries[0] : { status: res.status }
  }
  const history = async (c: string, id: string): Promise<unknown[]> =>
    (await (await s.request(`${API}/history?collection=${c}&id=${id}`, { headers: { cookie } })).json()).history ?? []
  const file = async (rel: string): Promise<string> => await readFile(path.join(s.repoDir, rel), 'utf8')
  return { s, mutate, read, file, history }
}

/** The changed lines of `git diff` (without headers or CRs), to prove what a save touched. */
function gitDiffLines (s: TestServer, rel: string): string[] {
  return git(s.repoDir, 'diff', '-U0', '--no-color', '--', rel).split('\n').filter(l => /^[-+](?![-+]{2} )/.test(l)).map(l => l.replace(/\r$/, ''))
}

const cases = [
  { name: 'YAML frontmatter', c: 'posts', id: 'jekyll-yaml', rel: 'content/posts/jekyll-yaml.md', field: 'title', value: 'Hello again', removed: '-title:  "Welcome to Jekyll!"   # shown in the feed', added: '+title:  "Hello again"   # shown in the feed', newKey: 'author', newLine: 'author: Ann\n', dropKey: 'image', dropLines: ['image:\n'] },
  { name: 'TOML frontmatter', c: 'posts', id: 'hugo-toml', rel: 'content/posts/hugo-toml.md', field: 'title', value: 'Markdown Guide', removed: '-title = "Markdown Syntax Guide"', added: '+title = "Markdown Guide"', newKey: 'author', newLine: 'author = "Ann"\n', dropKey: 'lastmod', dropLines: ['lastmod = 2022-05-01 15:23:59\n'] },
  { name: 'JSON frontmatter', c: 'posts', id: 'hugo-json', rel: 'content/posts/hugo-json.md', field: 'title', value: 'Emoji', removed: '-    "title": "Emoji Support",', added: '+    "title": "Emoji",', newKey: 'author', newLine: null, dropKey: 'date', dropLines: ['    "date": "2019-03-05",\r\n'] },
  { name: '.yaml (list) file', c: 'nav', id: 'main', rel: 'content/nav/main.yml', field: 'items.1.title', value: 'About us', removed: '-- title: "About"', added: '+- title: "About us"', newKey: null, newLine: null, dropKey: null, dropLines: [] },
  { name: '.toml file', c: 'social', id: 'links', rel: 'content/social/links.toml', field: 'github.url', value: 'https://github.com/y', removed: '-url = "https://github.com/x"  # profile', added: '+url = "https://github.com/y"  # profile', newKey: 'updated', newLine: 'updated = 2024-01-31\n', dropKey: 'title', dropLines: ['title = "Links"\n'] },
  { name: '.json file', c: 'site', id: 'settings', rel: 'content/site/settings.json', field: 'footer.text', value: '© 2025', removed: '-    "footer": { "text": "© 2024" }', added: '+    "footer": { "text": "© 2025" }', newKey: null, newLine: null, dropKey: 'menu', dropLines: ['    "menu": [ "home", "about" ],\n'] }
]

t.test('every format: a one-field save touches only that value; add, remove, no-op', async t => {
  const { s, mutate, read, file, history } = await setup(t)
  for (const k of cases) {
    t.test(k.name, async t => {
      const before = await file(k.rel)
      const saved = await mutate({ type: 'save_field', collection: k.c, id: k.id, field: k.field, value: k.value, expectedRevision: 1 })
      t.same(saved, { status: 200, ok: true, revision: 2 })
      t.same(gitDiffLines(s, k.rel), [k.removed, k.added], 'git diff shows only the edited value')
      t.comment(git(s.repoDir, 'diff', '--no-color', '--', k.rel))

      // The same value again: nothing written, no revision, no history snapshot.
      const mtime = (await stat(path.join(s.repoDir, k.rel))).mtimeMs
      const snapshots = (await history(k.c, k.id)).length
      const again = await mutate({ type: 'save_field', collection: k.c, id: k.id, field: k.field, value: k.value })
      t.same(again, { status: 200, ok: true, revision: 2 }, 'a no-op save keeps the revision')
      t.equal((await stat(path.join(s.repoDir, k.rel))).mtimeMs, mtime, 'file not rewritten')
      t.equal((await history(k.c, k.id)).length, snapshots, 'no history snapshot')

      const step1 = await file(k.rel)
      t.not(step1, before)
      let revision = 2
      if (k.newKey !== null) {
        const value = k.newKey === 'updated' ? '2024-01-31' : 'Ann'
        t.equal((await mutate({ type: 'save_field', collection: k.c, id: k.id, field: k.newKey, value })).status, 200)
        revision++
        const step2 = await file(k.rel)
        const diff = changedLines(step1, step2)
        if (k.newLine !== null) t.same(diff, { removed: [], added: [k.newLine] }, 'a new key is one new line')
        else t.same(diff.added.filter(l => !diff.removed.includes(l.replace(/,(\r?\n)$/, '$1'))).length, 1, 'a new key is one new line')
      }
      if (k.dropKey !== null) {
        const current = await read(k.c, k.id)
        const { [k.dropKey]: _dropped, ...rest } = current.data
        const beforeDrop = await file(k.rel)
        const put = await mutate({ type: 'put_entry', collection: k.c, id: k.id, data: rest, expectedRevision: revision })
        t.equal(put.status, 200)
        t.same(changedLines(beforeDrop, await file(k.rel)), { removed: k.dropLines, added: [] }, 'a removed key loses only its line')
      }
    })
  }
})

t.test('body saves keep frontmatter bytes; frontmatter saves keep the body; mdx', async t => {
  const { mutate, file, read } = await setup(t)
  for (const rel of ['content/posts/jekyll-yaml.md', 'content/posts/hugo-toml.md', 'content/posts/hugo-json.md']) {
    const id = path.basename(rel, '.md')
    const before = await file(rel)
    const body = (await read('posts', id)).data.body as string
    t.equal((await mutate({ type: 'save_field', collection: 'posts', id, field: 'body', value: 'New body\n' })).status, 200)
    const after = await file(rel)
    t.equal(after, before.slice(0, before.length - body.length) + 'New body\n', `${id}: frontmatter bytes kept`)
  }
  const mdx = await read('notes', 'astro')
  t.equal(mdx.data.title, 'Using MDX')
  t.equal(mdx.data.pubDate, '2022-07-01', 'a YAML date is the text written')
  t.equal((await mutate({ type: 'save_field', collection: 'notes', id: 'astro', field: 'title', value: 'MDX' })).status, 200)
  t.equal(await file('content/notes/astro.mdx'), files['content/notes/astro.mdx']!.replace("'Using MDX'", "'MDX'"))
  const list = await read('nav', 'main')
  t.same(list.data, { items: [{ title: 'Home', url: '/' }, { title: 'About', url: '/about/' }] }, 'a list-shaped data file is { items }')
})

t.test('a body planted as ---js through the API is stored as body and never runs', async t => {
  const { s, mutate, read, file } = await setup(t)
  const marker = path.join(os.tmpdir(), `git-cms-plant-${process.pid}-${Date.now()}`)
  const body = `---js\n{ title: require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned') }\n---\nafter\n`
  const put = await mutate({ type: 'put_entry', collection: 'posts', id: 'plant', data: { body } })
  t.equal(put.status, 200)
  t.ok((await file('content/posts/plant.md')).startsWith('---\n---\n---js\n'), 'an empty frontmatter guards the body')
  t.equal((await read('posts', 'plant')).data.body, body, 'reads back as the same body')
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'plant', field: 'title', value: 'x' })).status, 200)
  t.equal((await read('posts', 'plant')).data.body, body)
  const cookie = await s.login()
  const list = await (await s.request(`${API}/entries?collection=posts`, { headers: { cookie } })).json()
  t.ok(list.entries.length >= 4)
  t.notOk(existsSync(marker), 'the JavaScript never ran')
})

t.test('committed hostile frontmatter is an unreadable entry, quickly, and the server stays responsive', async t => {
  const marker = path.join(os.tmpdir(), `git-cms-committed-${process.pid}-${Date.now()}`)
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  for (let i = 1; i < 9; i++) {
    const n = String.fromCharCode(97 + i)
    levels.push(`${n}: &${n} [${Array(9).fill('*' + String.fromCharCode(96 + i)).join(',')}]`)
  }
  const bomb = levels.join('\n') + '\n'
  const s = await startServer(t, {
    config,
    files: {
      'content/posts/evil.md': `---js\n{ title: require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned') }\n---\nbody\n`,
      'content/posts/coffee.md': '---coffee\ntitle: "x"\n---\n',
      'content/posts/bomb.md': `---\n${bomb}---\nbody\n`,
      'content/posts/ok.md': '---\ntitle: Fine\n---\n',
      'content/nav/bomb.yaml': bomb,
      'content/social/bad.toml': 'title = \n',
      'content/site/bad.json': '{"a": '
    }
  })
  const cookie = await s.login()
  const started = Date.now()
  const [posts, nav, social, site, health] = await Promise.all([
    s.request(`${API}/entries?collection=posts`, { headers: { cookie } }).then(async r => await r.json()),
    s.request(`${API}/entries?collection=nav`, { headers: { cookie } }).then(async r => await r.json()),
    s.request(`${API}/entries?collection=social`, { headers: { cookie } }).then(async r => await r.json()),
    s.request(`${API}/entries?collection=site`, { headers: { cookie } }).then(async r => await r.json()),
    s.request(`${API}/entries?collection=posts&id=ok`, { headers: { cookie } })
  ])
  t.comment(`first lists (index builds included) answered in ${Date.now() - started} ms`)
  t.equal(health.status, 200)
  const errorOf = (list: any, id: string): string | undefined => list.entries.find((e: { id: string }) => e.id === id)?.readError?.message
  t.match(errorOf(posts, 'evil'), /not supported/)
  t.match(errorOf(posts, 'coffee'), /not supported/)
  t.match(errorOf(posts, 'bomb'), /alias/i)
  t.match(errorOf(nav, 'bomb'), /alias/i)
  t.ok(errorOf(social, 'bad'))
  t.ok(errorOf(site, 'bad'))
  t.equal((await s.request(`${API}/entries?collection=posts&id=evil`, { headers: { cookie } })).status, 422)
  t.notOk(existsSync(marker), 'the JavaScript never ran')

  // A bomb written while the service runs is read on the next list: quickly, as a readError.
  await writeFile(path.join(s.repoDir, 'content/nav/bomb.yaml'), '# changed\n' + bomb)
  await writeFile(path.join(s.repoDir, 'content/posts/bomb.md'), `---\n# changed\n${bomb}---\nbody\n`)
  const again = Date.now()
  const [nav2, posts2] = await Promise.all([
    s.request(`${API}/entries?collection=nav`, { headers: { cookie } }).then(async r => await r.json()),
    s.request(`${API}/entries?collection=posts`, { headers: { cookie } }).then(async r => await r.json())
  ])
  t.ok(Date.now() - again < 3000, `bombs re-read in ${Date.now() - again} ms`)
  t.match(errorOf(nav2, 'bomb'), /alias/i)
  t.match(errorOf(posts2, 'bomb'), /alias/i)
})

t.test('under a policy, a save that changes nothing makes no draft revision', async t => {
  const s = await startServer(t, { config: { ...config, permissions: { editor: ['*'] } }, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<any> => await (await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })).json()
  const same = { type: 'save_field', collection: 'posts', id: 'hugo-toml', field: 'title', value: 'Markdown Syntax Guide' }
  t.same(await mutate(same), { ok: true, revision: 1 }, 'the stored value again: no draft')
  t.same(await mutate({ ...same, value: 'Draft title' }), { ok: true, revision: 2 })
  t.same(await mutate({ ...same, value: 'Draft title' }), { ok: true, revision: 2 }, 'the draft value again: no new draft revision')
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hugo-toml.md'), 'utf8'), files['content/posts/hugo-toml.md'], 'base untouched')
})
