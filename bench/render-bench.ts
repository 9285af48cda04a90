/**
 * Render (issue 15): `GET /render` of a 20 KB Markdown body over HTTP, one request at a time:
 * of an unchanged body (what every page load asks for: base, or the editor's draft), and of a
 * body changed by an md_block edit just before (what the first page load after a save asks for:
 * the page is not cached, the chunks the save did not touch are), also for a body with footnotes
 * and reference definitions spread across it (each chunk then depends on definitions elsewhere).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ApiClient, runLoad } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms } from './cms-process.js'
import type { SectionReport } from './report.js'
import { runGit } from './site-generator.js'
import { summarize } from './stats.js'

const SAMPLES = 200
const CHANGED_SAMPLES = 30
const FIGURE_MAX_MS = 20_000
const BODY_CHARS = 20_000
const ID = 'long-read'
const NOTES_ID = 'long-notes'

interface Rendered { html: string, revision: number }

/**
 * A body of at least 20 KB: the LF documents of the Markdown round-trip corpus, joined and
 * repeated as needed (real READMEs and posts: headings, lists, code, tables, links).
 * @returns the body
 */
export function longBody (): string {
  // From bench/ (ts) or dist/bench/ (built).
  const dir = ['../test/fixtures/markdown-corpus/', '../../test/fixtures/markdown-corpus/']
    .map(rel => fileURLToPath(new URL(rel, import.meta.url))).find(d => existsSync(d))
  if (dir === undefined) throw new Error('markdown corpus not found')
  const docs = readdirSync(dir).filter(f => f.endsWith('.md')).sort()
    .map(f => readFileSync(path.join(dir, f), 'utf8')).filter(text => !text.includes('\r\n'))
  if (docs.length === 0) throw new Error('markdown corpus is empty')
  let body = ''
  for (let i = 0; body.length < BODY_CHARS; i++) body += (docs[i % docs.length] ?? '') + '\n'
  return body
}

/**
 * The 20 KB body with, every few paragraphs, a reference link and a footnote call, each defined in
 * a chunk of its own after the paragraph (the footnotes refer to the previous reference too).
 * @returns the body
 */
export function footnotedBody (): string {
  let n = 0
  return longBody().split('\n\n').map((part, i) => {
    if (i % 4 !== 3 || !/^[A-Z][a-z]/.test(part) || !part.endsWith('.') || part.includes('`')) return part
    n++
    return `${part} See [note ${n}][ref-${n}].[^n${n}]\n\n[^n${n}]: Footnote ${n}, after [the one before][ref-${Math.max(1, n - 1)}].\n\n` +
      `[ref-${n}]: https://example.com/ref/${n} "Reference ${n}"`
  }).join('\n\n')
}

/**
 * Runs the render section.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function renderBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  const site = await ctx.site({ entries: 20 })
  const body = longBody()
  const notes = footnotedBody()
  await writeFile(path.join(site.dir, 'content', 'posts', `${ID}.md`), `---\ntitle: A long read\n---\n${body}`)
  await writeFile(path.join(site.dir, 'content', 'posts', `${NOTES_ID}.md`), `---\ntitle: A long read with notes\n---\n${notes}`)
  await runGit(site.dir, 'add', '-A')
  await runGit(site.dir, 'commit', '-q', '-m', 'two 20 KB posts')
  report.info('body size', body.length, 'chars')
  report.info('body size (with footnotes and definitions)', notes.length, 'chars', `${(notes.match(/^\[\^n\d+\]:/gm) ?? []).length} footnotes, as many reference definitions`)
  const server = await spawnCms(site.dir)
  const client = new ApiClient(server.url)
  try {
    await client.login()
    const render = async (): Promise<number> => (await client.get<Rendered>(`/render?collection=posts&id=${ID}`)).ms
    await measure(report, 'GET /render p50 (20 KB body, base)', render)
    // A block edit makes a draft: the same route now renders the draft body.
    await editFirstParagraph(client, ID, (await client.get<Rendered>(`/render?collection=posts&id=${ID}`)).body.html, 0)
    await measure(report, 'GET /render p50 (20 KB body, draft)', render)
    // The first page load after a save renders the new draft body: the page is not in the cache,
    // the chunks the save did not change are.
    await measureChanged(client, report, ID, 'GET /render p50 (20 KB body, changed by the save before)')
    await measureChanged(client, report, NOTES_ID, 'GET /render p50 (20 KB body with footnotes and definitions, changed by the save before)')
  } finally {
    client.close()
    await server.stop()
  }
}

/** GET /render after each of a series of md_block saves to the same entry. */
async function measureChanged (client: ApiClient, report: SectionReport, id: string, name: string): Promise<void> {
  const changed: number[] = []
  for (let i = 1; i <= CHANGED_SAMPLES + 1; i++) {
    const res = await client.get<Rendered>(`/render?collection=posts&id=${id}`)
    if (i > 1) changed.push(res.ms)
    await editFirstParagraph(client, id, res.body.html, i)
  }
  const s = summarize(changed)
  report.atMost(name, s.p50, 'ms', 20, `sequential, n=${s.count}, one save before each`)
  report.info(`${name.replace(' p50', '')} p95`, s.p95, 'ms')
}

async function editFirstParagraph (client: ApiClient, id: string, html: string, n: number): Promise<void> {
  const src = /<p data-cms-src="([^"]+)"/.exec(html)?.[1]
  if (src === undefined) throw new Error('no paragraph with a source hint in the rendered body')
  await client.post('/mutate', { type: 'md_block', collection: 'posts', id, blockPath: 'body', src, html: `A paragraph edited by the bench, ${n} times.` })
}

async function measure (report: SectionReport, name: string, fn: () => Promise<number>): Promise<void> {
  await runLoad(1, 30, fn, FIGURE_MAX_MS)
  const run = await runLoad(1, SAMPLES, fn, FIGURE_MAX_MS)
  if (run.errors > 0) throw new Error(`${name}: ${run.errors} errors, first: ${run.firstError ?? ''}`)
  const s = summarize(run.latencies)
  report.atMost(name, s.p50, 'ms', 20, `sequential, n=${s.count}`)
  report.info(`${name.replace(' p50', '')} p95 / p99`, s.p95, 'ms', `p99 ${s.p99.toFixed(1)} ms`)
}
