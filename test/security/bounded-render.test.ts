import t from 'tap'
import { readdir } from 'node:fs/promises'
import { startServer, writeHeaders } from '../helpers/site.js'
import { BoundedRenderer } from '../../lib/commands/bounded-render.js'
import { holdsDuring } from '../helpers/main-thread-cpu.js'

const API = '/api/cms'
// Short, so that the hostile bodies below reach it quickly; the default is 10 s.
const TIME_LIMIT_MS = 1500
/** The event loop may stall this long at most while a hostile body renders (today: seconds). */
const MAX_STALL_MS = 700
/** The contract's bound on one turn's CPU, and /proc's CPU clock tick. */
const CONTRACT_STALL_MS = 100
const TICK_MS = 10

const paragraphs = (bytes: number): string => {
  const para = 'A paragraph of plain words that goes on for a while, as paragraphs do.\n\n'
  return para.repeat(Math.ceil(bytes / para.length))
}
const references = Array.from({ length: 2000 }, (_, i) => `[ref${i}]: https://example.com/${i}`).join('\n') + '\n\n' +
  Array.from({ length: 2000 }, (_, i) => `[ref${i}] and [other${i}]`).join('\n\n') + '\n'
/** A table whose header has `cols` cells and whose short rows are each padded to as many. */
const wideTable = (cols: number): string => '|' + 'a|'.repeat(cols) + '\n|' + '-|'.repeat(cols) + '\n' + '|x|\n'.repeat(300)
const deepDivs = '<div>'.repeat(5000) + 'deep' + '</div>'.repeat(5000) + '\n'
const frontmatter = (title: string): string => `---\ntitle: ${title}\n---\n`

/**
 * Runs `work` and reports whether it held the event loop past MAX_STALL_MS. Wall-clock holds grow
 * with the machine's load (1,002 ms for the 600-column preview at a load of 25), so a hold counts only
 * when the main thread's CPU in one turn (Linux) is past the contract's 100 ms too; a render on the
 * event loop costs seconds of both.
 */
async function stallDuring<T> (work: () => Promise<T>): Promise<{ result: T, stalled: boolean, what: string }> {
  let result: T | undefined
  const holds = await holdsDuring(async () => { result = await work() })
  const cpuOver = holds.cpuMs === null || holds.cpuMs > CONTRACT_STALL_MS + TICK_MS
  const what = `${Math.round(holds.wallMs)} ms wall-clock` + (holds.cpuMs === null ? '' : `, ${Math.round(holds.cpuMs)} ms of CPU in one turn`)
  return { result: result as T, stalled: cpuOver && holds.wallMs >= MAX_STALL_MS, what }
}

t.test('hostile bodies never hold the event loop, through GET /render and POST /preview', async t => {
  const s = await startServer(t, {
    env: { CMS_RENDER_TIME_LIMIT_MS: String(TIME_LIMIT_MS) },
    files: {
      'content/posts/long.md': frontmatter('Long') + paragraphs(900_000),
      'content/posts/references.md': frontmatter('References') + references,
      'content/posts/huge.md': frontmatter('Huge') + paragraphs(2_000_000)
    }
  })
  const cookie = await s.login()
  const render = async (id: string): Promise<Response> => await s.request(`${API}/render?collection=posts&id=${id}`, { headers: { cookie } })
  const preview = async (body: unknown): Promise<Response> =>
    await s.request(`${API}/preview`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ body, collection: 'posts', id: 'p' }) })

  // The worker starts on the first render; an ordinary body renders with its hints.
  const hello = await render('hello-world')
  t.equal(hello.status, 200)
  t.match((await hello.json()).html, /data-cms-src=/)

  for (const [name, request] of [
    ['900 KB of paragraphs (GET /render)', async () => await render('long')],
    ['2,000 link references (GET /render)', async () => await render('references')],
    ['a table padded to 600 columns (preview)', async () => await preview(wideTable(600))]
  ] as const) {
    const { result, stalled, what } = await stallDuring(request)
    t.notOk(stalled, `${name}: the event loop was held ${what} at most`)
    // Rendered within the limit, or refused with the reason.
    t.ok(result.status === 200 || result.status === 422, `${name}: ${result.status}`)
    if (result.status === 422) t.match(await result.json(), { code: 'render_refused', error: /longer than|too large/ }, `${name}: the reason`)
    else await result.arrayBuffer()
  }

  // A refused render ends its thread: an ordinary preview first waits for the new one, whose start
  // would otherwise count against the time limit on a loaded machine.
  t.equal((await preview('ready')).status, 200)
  const deep = await preview(deepDivs)
  t.equal(deep.status, 200, '<div> nested 5,000 deep is not a 500')
  const deepHtml = (await deep.json()).html as string
  t.match(deepHtml, /^<div data-cms-md="posts\/p#body"><pre>&#x3C;div>/, 'shown as escaped text')
  t.notMatch(deepHtml, /<div><div>/)

  const huge = await stallDuring(async () => await render('huge'))
  t.equal(huge.result.status, 422, 'a body over the length limit is refused')
  t.match(await huge.result.json(), { code: 'render_refused', limit: 1_000_000, error: /longer than 1000000 characters/ })

  // After a worker was ended, the next render starts a new one.
  const again = await render('hello-world')
  t.equal(again.status, 200)
})

t.test('closing ends a runaway render at once instead of waiting for it', async t => {
  const renderer = new BoundedRenderer({ timeLimitMs: 600_000 })
  t.teardown(async () => { await renderer.close() })
  t.match(await renderer.render('*hi*', { collection: 'posts', id: 'p' }), /<em>hi<\/em>/)
  // Two runaways hold both threads: the third render waits for one.
  const runaway = renderer.render(wideTable(800).repeat(3), { collection: 'posts', id: 'p' })
  const other = renderer.render(wideTable(800).repeat(3), { collection: 'posts', id: 'q' })
  const queued = renderer.render('queued', { collection: 'posts', id: 'p' })
  const refused = Promise.all([
    t.rejects(runaway, { status: 422, code: 'render_refused' }),
    t.rejects(other, { status: 422, code: 'render_refused' }),
    t.rejects(queued, { status: 422, code: 'render_refused' })
  ])
  const started = performance.now()
  await renderer.close()
  await refused
  t.ok(performance.now() - started < 10_000, `closed in ${Math.round(performance.now() - started)} ms`)
  await t.rejects(renderer.render('after', { collection: 'posts', id: 'p' }), { code: 'render_refused' })
})

t.test("one editor's runaway render does not hold another's", async t => {
  // A long limit: the runaway runs all through the test (rendered alone, it takes minutes).
  const renderer = new BoundedRenderer({ timeLimitMs: 600_000 })
  t.teardown(async () => { await renderer.close() })
  t.match(await renderer.render('*hi*', { collection: 'posts', id: 'p' }), /<em>hi<\/em>/)
  const runaway = renderer.render(wideTable(800).repeat(3), { collection: 'posts', id: 'slow' })
  let runawaySettled = false
  const refused = runaway.then(() => { runawaySettled = true }, () => { runawaySettled = true })
  const started = performance.now()
  t.match(await renderer.render('*quick*', { collection: 'posts', id: 'other' }), /<em>quick<\/em>/)
  const ms = performance.now() - started
  // The second thread starts meanwhile (a few seconds on a busy machine); before, the render
  // waited for the runaway to end (20 s on 2 cores at a load of 18, or the time limit).
  t.notOk(runawaySettled, `answered in ${Math.round(ms)} ms, while the runaway still ran`)
  t.match(await renderer.render('*again*', { collection: 'posts', id: 'other' }), /<em>again<\/em>/, 'and the next one too')
  await renderer.close()
  await refused
})

t.test('a render thread idle past its limit leaves, and the next render starts a new one', async t => {
  // The process's own threads (Linux): the render thread is one of them while it lives.
  const threads = async (): Promise<number> => (await readdir('/proc/self/task')).length
  const until = async (what: string, ok: (n: number) => boolean): Promise<number> => {
    for (let n = await threads(), deadline = performance.now() + 60_000; ; n = await threads()) {
      if (ok(n)) return n
      if (performance.now() > deadline) throw new Error(`${what}: ${n} threads`)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
  const before = await threads()
  const renderer = new BoundedRenderer({ idleMs: 300 })
  t.teardown(async () => { await renderer.close() })
  t.match(await renderer.render('*hi*', { collection: 'posts', id: 'p' }), /<em>hi<\/em>/)
  const running = await threads()
  t.ok(running > before, 'the render thread runs')
  const left = await until('the idle thread leaves', n => n < running)
  t.ok(left < running, 'the idle thread left')
  t.match(await renderer.render('*again*', { collection: 'posts', id: 'p' }), /<em>again<\/em>/, 'the next render starts a new thread')
  t.ok(await threads() > left)
})

t.test('runs that the outline scans for GFM constructs cost linear time: ordinary bodies are outlined, not refused', async t => {
  // Before, the email-literal pattern was cubic (`a_` x 2,048: 14 s), the `<...%` and URL-literal ones quadratic:
  // these bodies ran into the time limit and block editing refused them.
  const renderer = new BoundedRenderer({ timeLimitMs: 10_000 })
  t.teardown(async () => { await renderer.close() })
  for (const [name, body] of [
    ['snake_case without spaces, 64 KB', 'a_'.repeat(32_768) + '\n'],
    ['words with underscores, then an email', ('a_b.c' + 'x'.repeat(40) + ' ').repeat(1_400) + 'end_x@y.z\n'],
    ['a line of 200,000 `<`', '<'.repeat(200_000) + '\n'],
    // The URL-literal pattern scanned a run from every scheme-like start: 64 KB took 3.7-7 s, these minutes.
    ['URL-like runs, 160 KB', '_W://&X'.repeat(23_000) + '\n'],
    ['`a://` repeated, 160 KB', 'a://'.repeat(40_000) + '\n']
  ] as const) {
    const outline = await renderer.outline(body, false)
    t.equal(outline.blocks.length, 1, `${name}: one paragraph`)
    t.equal(outline.blocks[0]?.kind, 'paragraph', name)
  }
})
