import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, git, writeHeaders, type TestServer } from '../helpers/site.js'

const API = '/api/cms'
const schema = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    date: { type: 'string' },
    rank: { type: 'number' },
    pinned: { type: 'boolean' },
    tags: { type: 'array' }
  }
}
const config = { collections: { posts: { format: 'yaml' as const, schema, listFields: ['title', 'date', 'rank'] } } }
// Titles mix case, an accent and numbers; dates mix a day, a local time and a zoned time; `c`
// has no rank and `e` no date; `b` and `g` tie on rank and date.
const files = {
  'content/posts/a.yaml': 'title: Banana\ndate: "2024-03-01"\nrank: 10\n',
  'content/posts/b.yaml': 'title: apple\ndate: "2023-12-31"\nrank: 2\npinned: true\n',
  'content/posts/c.yaml': 'title: Cherry\ndate: "2024-03-01 09:30:00"\npinned: false\n',
  'content/posts/d.yaml': 'title: Post 10\ndate: "2022-01-01"\nrank: 2.5\n',
  'content/posts/e.yaml': 'title: Post 9\nrank: -1\n',
  'content/posts/f.yaml': 'title: Éclair\ndate: "2024-01-15T08:00:00+02:00"\nrank: 100\n',
  'content/posts/g.yaml': 'title: Grape\ndate: "2023-12-31"\nrank: 2\ntags: [x]\n'
}

interface Listing { entries: Array<{ id: string, draft?: boolean, data?: Record<string, unknown> }>, pagination: { total: number, totalPages: number } }

async function list (s: TestServer, cookie: string, query: string): Promise<Listing> {
  const res = await s.request(`${API}/entries?collection=posts&${query}`, { headers: { cookie } })
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${await res.text()}`)
  return await res.json() as Listing
}

async function ids (s: TestServer, cookie: string, query: string): Promise<string> {
  return (await list(s, cookie, query)).entries.map(e => e.id).join(',')
}

t.test('sorts by id, title, a date field, a number field and a boolean, both ways, missing values last', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  t.equal(await ids(s, cookie, ''), 'a,b,c,d,e,f,g', 'no sort: index order')
  t.equal(await ids(s, cookie, 'sort=id'), 'a,b,c,d,e,f,g')
  t.equal(await ids(s, cookie, 'sort=id&order=desc'), 'g,f,e,d,c,b,a')
  t.equal(await ids(s, cookie, 'sort=title'), 'b,a,c,f,g,e,d', 'case and accents collated, "Post 9" before "Post 10"')
  t.equal(await ids(s, cookie, 'sort=title&order=asc'), 'b,a,c,f,g,e,d')
  t.equal(await ids(s, cookie, 'sort=title&order=desc'), 'd,e,g,f,c,a,b')
  t.equal(await ids(s, cookie, 'sort=date'), 'd,b,g,f,a,c,e', 'dates as instants (f is 06:00Z), ties by id, no date last')
  t.equal(await ids(s, cookie, 'sort=date&order=desc'), 'c,a,f,b,g,d,e', 'missing still last, ties still by id')
  t.equal(await ids(s, cookie, 'sort=rank'), 'e,b,g,d,a,f,c', 'numbers as numbers (10 after 2.5), no rank last')
  t.equal(await ids(s, cookie, 'sort=rank&order=desc'), 'f,a,d,b,g,e,c')
  t.equal(await ids(s, cookie, 'sort=pinned'), 'c,b,a,d,e,f,g', 'false before true, then those without')
  t.equal(await ids(s, cookie, 'sort=tags'), 'a,b,c,d,e,f,g', 'a list is no sortable value: every entry ties, by id')
  const page = await list(s, cookie, 'sort=rank&pageSize=3&page=2')
  t.equal(page.entries.map(e => e.id).join(','), 'd,a,f', 'pages of the sorted order')
  t.equal(page.pagination.total, 7)
  t.equal(page.pagination.totalPages, 3)
  t.same(page.entries[0]?.data, { title: 'Post 10', date: '2022-01-01', rank: 2.5 }, 'entries keep their full data')
  // Repeated requests give the same order (the cached one).
  for (let i = 0; i < 3; i++) t.equal(await ids(s, cookie, 'sort=date&order=desc'), 'c,a,f,b,g,d,e')
})

t.test('a sort combines with q, and the order follows writes and outside edits', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  t.equal(await ids(s, cookie, 'q=post&sort=rank'), 'e,d')
  t.equal(await ids(s, cookie, 'q=post&sort=rank&order=desc'), 'd,e')
  t.equal(await ids(s, cookie, 'q=post&sort=title'), 'e,d')
  t.equal(await ids(s, cookie, 'q=2023&sort=title&order=desc'), 'g,b', 'a full-text match (a date string field) sorted by title')
  t.equal(await ids(s, cookie, 'q=2023&draft=none'), 'b,g', 'q with the draft filter')
  t.equal((await list(s, cookie, 'q=post&sort=rank')).pagination.total, 2)
  t.equal(await ids(s, cookie, 'q=nothing&sort=rank'), '')
  t.equal(await ids(s, cookie, 'sort=rank'), 'e,b,g,d,a,f,c')
  const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'e', field: 'rank', value: 50 }) })
  t.equal(res.status, 200)
  t.equal(await ids(s, cookie, 'sort=rank'), 'b,g,d,a,e,f,c', 'the cached order was rebuilt after the write')
  t.equal(await ids(s, cookie, 'q=post&sort=rank'), 'd,e')
  const put = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'h', data: { title: 'Kiwi', rank: 0 } }) })
  t.equal(put.status, 200)
  t.equal(await ids(s, cookie, 'sort=rank'), 'h,b,g,d,a,e,f,c', 'a new entry takes its place')
  t.equal(await ids(s, cookie, 'sort=title'), 'b,a,c,f,g,h,e,d')
})

t.test('draft filter: only this editor\'s drafted entries, none of them, or all; drafts sort by their own values', async t => {
  const s = await startServer(t, { config: { ...config, permissions: { editor: ['*'] } }, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<number> => (await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })).status
  // Under a policy every edit is a draft: one changed entry, one new, one deleted.
  t.equal(await mutate({ type: 'save_field', collection: 'posts', id: 'a', field: 'rank', value: 1 }), 200)
  t.equal(await mutate({ type: 'put_entry', collection: 'posts', id: 'h', data: { title: 'Kiwi', rank: 3 } }), 200)
  t.equal(await mutate({ type: 'delete_entry', collection: 'posts', id: 'c' }), 200)
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/a.yaml'), 'utf8'), files['content/posts/a.yaml'], 'the file is untouched: a draft')
  t.ok(git(s.repoDir, 'for-each-ref', 'refs/cms/drafts/').length > 0, 'a real draft ref')

  t.equal(await ids(s, cookie, 'sort=rank'), 'e,a,b,g,d,h,f', 'a draft sorts by its own rank, the deleted one is hidden')
  t.equal(await ids(s, cookie, 'sort=rank&order=desc'), 'f,h,d,b,g,a,e')
  t.equal(await ids(s, cookie, 'sort=title'), 'b,a,f,g,h,e,d')
  t.equal(await ids(s, cookie, 'draft=all&sort=rank'), 'e,a,b,g,d,h,f')
  const only = await list(s, cookie, 'draft=only&sort=rank')
  t.equal(only.entries.map(e => e.id).join(','), 'a,h')
  t.ok(only.entries.every(e => e.draft === true), 'every listed entry is a draft')
  t.equal(only.pagination.total, 2)
  t.equal(await ids(s, cookie, 'draft=only&sort=rank&order=desc'), 'h,a')
  t.equal(await ids(s, cookie, 'draft=only'), 'a,h', 'no sort: drafted entries in base order, new ones last')
  const none = await list(s, cookie, 'draft=none&sort=rank')
  t.equal(none.entries.map(e => e.id).join(','), 'e,b,g,d,f')
  t.ok(none.entries.every(e => e.draft === undefined), 'no draft listed')
  t.equal(none.pagination.total, 5)
  t.equal(await ids(s, cookie, 'draft=none'), 'b,d,e,f,g')
  t.equal(await ids(s, cookie, 'draft=only&q=kiwi'), 'h', 'q applies to drafts')
  t.equal(await ids(s, cookie, 'draft=only&q=grape'), '')
  t.equal(await ids(s, cookie, 'draft=none&q=post&sort=rank&order=desc'), 'd,e')
  const paged = await list(s, cookie, 'sort=rank&pageSize=2&page=3')
  t.equal(paged.entries.map(e => e.id).join(','), 'd,h', 'pages of the merged order')
  t.equal(paged.pagination.total, 7)

  // Another editor (a fresh session) sees no drafts of the first one.
  const other = await s.login()
  t.equal(await ids(s, other, 'draft=only'), '')
  t.equal(await ids(s, other, 'sort=rank'), 'e,b,g,d,a,f,c')
})

t.test('bad sort, order or draft values are 400 naming the parameter and change nothing', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const before = await repoFingerprint(s.repoDir)
  const cases: Array<[string, string, RegExp]> = [
    ['sort=__proto__', 'sort', /sort/],
    ['sort=constructor', 'sort', /sort/],
    ['sort=nope', 'sort', /unknown field "nope".*rank/],
    ['sort=title.x', 'sort', /sort/],
    ['sort=../etc', 'sort', /sort/],
    ['sort=' + 'x'.repeat(200), 'sort', /sort/],
    ['sort=title&sort=date', 'sort', /once/],
    ['sort=rank&order=up', 'order', /asc, desc/],
    ['sort=rank&order=ASC', 'order', /order/],
    ['order=desc&order=asc', 'order', /once/],
    ['draft=maybe', 'draft', /all, only, none/],
    ['draft=', 'draft', /./],
    ['draft[]=only', 'draft', /./]
  ]
  for (const [query, field, message] of cases) {
    const res = await s.request(`${API}/entries?collection=posts&${query}`, { headers: { cookie } })
    if (query === 'draft=' || query === 'draft[]=only') {
      // An empty value means the default; a bracketed name is another (unknown, ignored) parameter.
      t.equal(res.status, 200, query)
      continue
    }
    t.equal(res.status, 400, query)
    const body = await res.json() as { error: string, field?: string }
    t.match(body.error, message, query)
    t.equal(body.field, field, `${query} names ${field}`)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed')
  t.equal(await ids(s, cookie, 'sort=rank'), 'e,b,g,d,a,f,c', 'and the list still sorts')
})

t.test('a Markdown body cannot be sorted on; an inferred collection sorts by its inferred fields', async t => {
  const s = await startServer(t, {
    files: {
      'content/notes/x.md': '---\ntitle: Zeta\nweight: 2\n---\nBody\n',
      'content/notes/y.md': '---\ntitle: Alpha\nweight: 1\n---\nOther\n'
    }
  })
  const cookie = await s.login()
  const res = await s.request(`${API}/entries?collection=notes&sort=body`, { headers: { cookie } })
  t.equal(res.status, 400)
  t.match((await res.json() as { error: string }).error, /body/)
  const get = async (q: string): Promise<string> => (await (await s.request(`${API}/entries?collection=notes&${q}`, { headers: { cookie } })).json() as Listing).entries.map(e => e.id).join(',')
  t.equal(await get('sort=weight'), 'y,x')
  t.equal(await get('sort=title&order=desc'), 'x,y')
  t.equal((await s.request(`${API}/entries?collection=notes&sort=nothing`, { headers: { cookie } })).status, 400)
})
