import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { renderMarkdown } from '../../lib/content/markdown/index.js'
import { markdownNestingDepth, htmlTooDeep } from '../../lib/content/markdown/nesting-limit.js'
import { repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'
const opts = { collection: 'posts', id: 'deep' }
const deepQuote = '>'.repeat(60_000) + ' hello <script>x</script>\n'
/**
 * The process's CPU since `from`, in ms: the bound these checks hold (a blow-up costs seconds of it),
 * where wall-clock time grows with the machine's load (6.7 s for this answer at a load of 25).
 */
const cpuMsSince = (from: NodeJS.CpuUsage): number => { const used = process.cpuUsage(from); return (used.user + used.system) / 1000 }
const deepList = Array.from({ length: 500 }, (_, i) => ' '.repeat(i * 2) + '- item').join('\n') + '\n'

t.test('renderMarkdown renders a too deeply nested body as escaped plain text, fast', async t => {
  for (const [name, body] of [['60,000 nested >', deepQuote], ['500 nested list levels', deepList], ['a run of list markers', '- '.repeat(5000) + 'x\n'], ['40,000 emphasis delimiters', 'Some ' + '*'.repeat(20_000) + 'x' + '*'.repeat(20_000) + '\n'], ['20,000 unclosed link destinations', 'See ' + '[a]('.repeat(20_000) + '\n']] as const) {
    const started = process.cpuUsage()
    const html = renderMarkdown(body, opts)
    t.ok(cpuMsSince(started) < 1000, `${name}: ${Math.round(cpuMsSince(started))} ms of CPU`)
    t.match(html, /^<div data-cms-md="posts\/deep#body"><pre>/, `${name}: plain text in the wrapper`)
    t.notMatch(html, /<script>/, `${name}: escaped`)
    t.notMatch(html, /<blockquote>|<li>/, `${name}: not parsed`)
  }
  const normal = renderMarkdown('> quoted\n>\n> - a\n>   - b\n\n```\n' + ' '.repeat(200) + '- code, not a list\n```\n', opts)
  t.match(normal, /<blockquote/, 'ordinary nesting still renders')
  const ordinary = renderMarkdown('Text with ***strong emphasis*** and [a link](https://example.com).\n\n' + '*'.repeat(80) + '\n\n' + '_ '.repeat(40) + '\n', opts)
  t.match(ordinary, /<em><strong>strong emphasis<\/strong><\/em>/, 'ordinary emphasis still renders')
  t.match(ordinary, /<hr/, 'a long thematic break is not a delimiter run')
  t.match(normal, /<li/)
})

t.test('the depth estimate: quotes, list markers, indentation, fenced code skipped', async t => {
  t.equal(markdownNestingDepth('plain\n'), 0)
  t.equal(markdownNestingDepth('> > > x\n'), 3)
  t.equal(markdownNestingDepth('- a\n  - b\n    - c\n'), 3)
  t.equal(markdownNestingDepth('> - > 1. x\n'), 4)
  t.equal(markdownNestingDepth('```\n> > > > >\n```\n> x\n'), 1)
  t.equal(htmlTooDeep('<em>'.repeat(65) + 'x'), true)
  t.equal(htmlTooDeep('<strong>a</strong>' + '<br>'.repeat(500)), false)
})

t.test('md_block answers 400 for a too deep body or html, quickly, and writes nothing', async t => {
  const s = await startServer(t, { files: { 'content/posts/deep.md': '---\ntitle: Deep\n---\n' + deepQuote } })
  const cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const before = await repoFingerprint(s.repoDir)
  let started = process.cpuUsage()
  const deepBody = await mutate({ type: 'md_block', collection: 'posts', id: 'deep', blockPath: 'body', src: '0:10:0000000000000000', html: 'hi' })
  t.equal(deepBody.status, 400)
  t.match(await deepBody.json(), { code: 'bad_request', error: /nests deeper/ })
  t.ok(cpuMsSince(started) < 3000, `answered in ${Math.round(cpuMsSince(started))} ms of CPU`)

  const hello = await readFile(path.join(s.repoDir, 'content/posts/hello-world.md'), 'utf8')
  const body = hello.slice(hello.indexOf('\n---', 3) + 5)
  const src = /data-cms-src="([^"]+)"/.exec(renderMarkdown(body, { collection: 'posts', id: 'hello-world' }))![1]!
  started = process.cpuUsage()
  const deepHtml = await mutate({ type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src, html: '<em>'.repeat(60_000) + 'x' + '</em>'.repeat(60_000) })
  t.equal(deepHtml.status, 400)
  t.match(await deepHtml.json(), { code: 'bad_request', field: 'html' })
  t.ok(cpuMsSince(started) < 3000, `answered in ${Math.round(cpuMsSince(started))} ms of CPU`)
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')

  const ok = await mutate({ type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src, html: 'A <em>new</em> first block' })
  t.equal(ok.status, 200, 'an ordinary block edit still works')
})
