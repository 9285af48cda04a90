import t from 'tap'
import { mayMatchUrl, normalizeUrlPath } from '../../lib/http/page-match-url.js'
import { htmlTooDeep } from '../../lib/content/markdown/nesting-limit.js'
import { EntryParseError, parseEntry, serializeEntry } from '../../lib/content/formats.js'
import { editJsFrontmatter, parseJsFrontmatter } from '../../lib/content/js-frontmatter.js'
import { parseOutline } from '../../lib/content/markdown/markdown-it-outline.js'
import { applyBlockEdit, renderMarkdown } from '../../lib/content/markdown/index.js'
import { redactSecrets } from '../../lib/git-runner.js'
import { startServer } from '../helpers/site.js'
import { holdsDuring } from '../helpers/main-thread-cpu.js'

// Each input below took minutes on the event loop with the old pattern (figures in the commit
// messages); the rewritten patterns answer them in milliseconds. The assertions are on outcomes.

t.test('a long request path against a url pattern of several placeholders is answered', async t => {
  // `^.*.*.*\.html` backtracked O(n^4): a 2 KB path took 3.6 s, a 16 KB one (the header limit) half an hour.
  const pattern = '/{year}/{month}/{day}/{slug}.html'
  t.equal(mayMatchUrl(pattern, '/' + 'a/'.repeat(8_000)), false)
  t.equal(mayMatchUrl(pattern, '/2024/01/02/first-post.html'), true)
  t.equal(mayMatchUrl('/blog/{slug}/', '/BLOG/x/'), true)
  t.equal(mayMatchUrl('/blog/{slug}/', '/news/x/'), false)
  // `\/+$` tried every `/` of a run: 1 MB of `/` then `x/` took 85 s.
  const slashes = '/'.repeat(4 << 20)
  t.equal(normalizeUrlPath(slashes + 'X/'), slashes + 'x')
})

t.test('block HTML with many unclosed tags is measured, not stalled on', async t => {
  // Each `<a` with no `>` after it scanned to the end, and the name and attributes overlapped: 64 KB, 3.3 s.
  t.equal(htmlTooDeep('<a' + '-'.repeat(1 << 20)), false)
  t.equal(htmlTooDeep('<a'.repeat(1 << 19)), false)
  t.equal(htmlTooDeep('<div>'.repeat(1_000)), true)
})

t.test('a YAML value of digits and underscores is written in time', async t => {
  // `[0-9][0-9_]*_[0-9_]*` tried every split of the run: 64 KB took 12 s.
  const value = '0' + '_'.repeat(1 << 20) + 'E'
  const text = serializeEntry('yaml', { title: value }, 'title: old\n')
  t.same(parseEntry('yaml', text), { title: value })
  t.equal(serializeEntry('yaml', { a: 'x', n: '1_000' }, 'a: x\n'), 'a: x\nn: "1_000"\n', 'a YAML 1.1 number is still quoted')
})

t.test('a JSON file with a long run of spaces is edited in time', async t => {
  // `\s*$` tried every space of the run: 64 KB took 7.2 s.
  const previous = '{"a": "x' + ' '.repeat(1 << 20) + 'y"}\n'
  const text = serializeEntry('json', { a: 'x' + ' '.repeat(1 << 20) + 'y', b: 1 }, previous)
  t.same(parseEntry('json', text), { a: 'x' + ' '.repeat(1 << 20) + 'y', b: 1 })
})

t.test('JavaScript front matter with unclosed comments or long spaces is read and edited in time', async t => {
  // Each unclosed `/*` scanned to the end: 64 KB took 0.85 s, 3 MB half an hour.
  t.throws(() => parseJsFrontmatter('{ a: 1 };' + '/*a'.repeat(1_000_000)), EntryParseError)
  t.same(parseJsFrontmatter('{ a: 1 } /* closed */ // line\n;'), { a: 1 })
  // `\s+$` tried every space of an inner run: 1 MB, minutes.
  const inner = `const a = "x${' '.repeat(1 << 20)}y"\n`
  const a = 'x' + ' '.repeat(1 << 20) + 'y'
  t.same(parseJsFrontmatter(editJsFrontmatter(inner, { a }, { a, b: 1 })), { a, b: 1 })
})

t.test('a fence left open over many blank lines is outlined, not refused by the render limit', async t => {
  // `\n+$` tried every newline of an inner run: 64 KB of blank lines took 10 s (the render limit).
  const outline = parseOutline('```\n' + '\n'.repeat(1 << 20) + 'x\n')
  t.equal(outline.blocks.length, 1)
  t.equal(outline.blocks[0]?.kind, 'code')
})

t.test('block HTML whose text holds many U+0001 is edited, not refused by the render limit', async t => {
  // Each `\u0001img` with no `\u0002` after it scanned to the end: 200 KB (md_block's cap) took 19 s, 1 MB minutes.
  const body = 'A ![i](x.png) b\n'
  const src = /data-cms-src="([^"]+)"/.exec(renderMarkdown(body, { collection: 'c', id: 'i' }))?.[1] ?? ''
  const r = applyBlockEdit({ body, src, html: 'A <img src="x.png" alt="i"> b' + '\u0001img'.repeat(250_000) })
  t.equal(r.changed, true)
  t.match(r.body, /^A !\[i\]\(x\.png\) b/)
})

t.test("git's text is redacted in one pass whatever its length", async t => {
  // `\b[a-z][a-z0-9+.-]*://` was tried from every word boundary of a run: 64 KB of `a://` took 1.6 s, of `a.` 3.3 s.
  const long = 'a://'.repeat(1 << 18) + ' https://user:tok3n@host/x?private_token=s3cret ' + 'a.'.repeat(1 << 19)
  const clean = redactSecrets(long)
  t.ok(clean.includes(' https://***@host/x?*** '), 'the credentials in it are still hidden')
  t.equal(clean.length, long.length - 'user:tok3n'.length - 'private_token=s3cret'.length + 6)
})

t.test('a media folder given as a long run of slashes is answered without holding the event loop', async t => {
  // `\/+$` tried every `/` of the run: 15,000 slashes then a name (the header limit allows 16 KB) held the event loop 356 ms.
  const s = await startServer(t, {})
  const cookie = await s.login()
  let status = 0
  const holds = await holdsDuring(async () => {
    status = (await s.request(`/api/cms/media?folder=${'/'.repeat(15_000)}x`, { headers: { cookie } })).status
  })
  t.equal(status, 400, 'refused: no such folder')
  if (holds.cpuMs !== null) t.ok(holds.cpuMs < 150, `${holds.cpuMs} ms of CPU in one turn at most`)
})
