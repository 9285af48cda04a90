import t from 'tap'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// Runs in a fresh process: the cap changes a V8 flag for the whole process.
const capModule = fileURLToPath(new URL('../dist/lib/young-generation-cap.js', import.meta.url))
/** The child scripts' garbage: short-lived objects, one in a hundred kept a while (`keep`), `churn(n)`. */
const CHURN = `
  const keep = []
  const churn = async (n) => {
    for (let i = 0; i < n; i++) {
      const o = { a: i, b: 'x' + i, c: [i, { d: i }] }
      if (i % 100 === 0) keep.push(o)
      if (keep.length > 5000) keep.splice(0, 2500)
      // Let the gc observer run now and then, as a server's event loop does between requests.
      if (i % 100_000 === 0) await new Promise(resolve => setImmediate(resolve))
    }
  }
`
const script = (cap: boolean, worker: boolean | 'startWorker' | 'startWorkerEarly'): string => `
  const v8 = await import('node:v8')
  const { Worker } = await import('node:worker_threads')
  const { capYoungGeneration, startWorker } = await import(${JSON.stringify(capModule)})
  if (${String(cap)}) capYoungGeneration()
  const newSpace = () => v8.getHeapSpaceStatistics().find(s => s.space_name === 'new_space').space_size
  ${CHURN}
  await churn(3_000_000)
  if (${String(worker === true)}) {
    // Until the cap is reached (and seen by the observer) when there is one.
    for (let i = 0; i < 20 && newSpace() < 16 * 1024 * 1024; i++) await churn(500_000)
    await new Promise(resolve => setImmediate(resolve))
    await new Promise(resolve => setImmediate(resolve))
    // A worker thread (the index and search builders) starts once the cap is reached: its heap
    // setup must not turn the young generation's growth back on.
    const w = new Worker('setTimeout(() => {}, 300)', { eval: true })
    await new Promise(resolve => w.once('online', resolve))
    // Everything the next collections see survives: V8 grows the young generation whenever allowed.
    const held = []
    for (let i = 0; i < 1_500_000; i++) held.push({ a: i, b: 'y' + i })
    held.length = 0
    await new Promise(resolve => w.once('exit', resolve))
  }
  if (${JSON.stringify(worker)} === 'startWorker') {
    for (let i = 0; i < 20 && newSpace() < 16 * 1024 * 1024; i++) await churn(500_000)
    await new Promise(resolve => setImmediate(resolve))
    await new Promise(resolve => setImmediate(resolve))
    // As the service starts its index and search workers: this thread goes on allocating at once,
    // without a turn of its event loop (no 'online' event can come in between). The first takes the
    // spare worker started with the cap (set up long ago); the second is a new thread, whose heap
    // setup startWorker waits for.
    const workers = [1, 2].map(job => startWorker(new URL('data:text/javascript,' + encodeURIComponent("import { workerData } from 'node:worker_threads'; if (workerData.job !== " + job + ") process.exit(3); setTimeout(() => {}, 300)")), { job }))
    const held = []
    for (let i = 0; i < 1_500_000; i++) held.push({ a: i, b: 'y' + i })
    held.length = 0
    const codes = await Promise.all(workers.map(w => new Promise(resolve => w.once('exit', resolve))))
    if (codes.some(code => code !== 0)) throw new Error('a worker did not see its workerData: ' + codes.join(' '))
  }
  if (${JSON.stringify(worker)} === 'startWorkerEarly') {
    // As a restart starts its stat worker: before the cap is reached, so startWorker does not wait.
    // This thread reaches the cap while the worker starts up, with no turn of its event loop in
    // between (the gc observer has not seen it yet): once it does, the cap must wait for the
    // worker's heap setup (which resets the growth factor) before turning growth off.
    const churnNow = (n) => {
      for (let i = 0; i < n; i++) {
        const o = { a: i, b: 'x' + i, c: [i, { d: i }] }
        if (i % 100 === 0) keep.push(o)
        if (keep.length > 5000) keep.splice(0, 2500)
      }
    }
    for (let i = 0; i < 40 && newSpace() < 16 * 1024 * 1024; i++) churnNow(500_000)
    const w = startWorker(new URL('data:text/javascript,setTimeout(() => {}, 300)'), { job: 1 })
    await new Promise(resolve => setImmediate(resolve))
    await new Promise(resolve => setImmediate(resolve))
    const held = []
    for (let i = 0; i < 1_500_000; i++) held.push({ a: i, b: 'y' + i })
    held.length = 0
    await new Promise(resolve => w.once('exit', resolve))
  }
  process.stdout.write(String(newSpace()))
`
// Without the test runner's NODE_OPTIONS (it adds them to every child it spawns): its module loader
// hooks start threads of their own, each of which resets the growth factor unseen (the executable
// runs without hooks).
const newSpace = (cap: boolean, worker: boolean | 'startWorker' | 'startWorkerEarly' = false): number => Number(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', script(cap, worker)], { encoding: 'utf8' }))

t.test('the executable caps the young generation at two 8 MB semi-spaces', async t => {
  const capped = newSpace(true)
  const free = newSpace(false)
  t.ok(capped <= 16 * 1024 * 1024, `capped: ${(capped / 1048576).toFixed(1)} MB`)
  t.ok(free > capped, `without the cap V8 grows it further: ${(free / 1048576).toFixed(1)} MB`)
})

t.test('the cap holds after a worker thread starts', async t => {
  const capped = newSpace(true, true)
  const free = newSpace(false, true)
  t.ok(capped <= 16 * 1024 * 1024, `capped, with a worker: ${(capped / 1048576).toFixed(1)} MB`)
  t.ok(free > capped, `without the cap V8 grows it further: ${(free / 1048576).toFixed(1)} MB`)
})

t.test('workers started with startWorker (the spare, then a new thread) do not undo the cap, even while this thread keeps allocating', async t => {
  const capped = newSpace(true, 'startWorker')
  const free = newSpace(false, 'startWorker')
  t.ok(capped <= 16 * 1024 * 1024, `capped, startWorker: ${(capped / 1048576).toFixed(1)} MB`)
  t.ok(free > capped, `without the cap V8 grows it further: ${(free / 1048576).toFixed(1)} MB`)
})

t.test('a worker started with startWorker before the cap is reached does not undo it when this thread reaches the cap while the worker starts up', async t => {
  const capped = newSpace(true, 'startWorkerEarly')
  const free = newSpace(false, 'startWorkerEarly')
  t.ok(capped <= 16 * 1024 * 1024, `capped, startWorker before the cap: ${(capped / 1048576).toFixed(1)} MB`)
  t.ok(free > capped, `without the cap V8 grows it further: ${(free / 1048576).toFixed(1)} MB`)
})

// afterStart: once the start's work is done, one memory-reducing collection (the young generation
// back to its minimum, the start's garbage gone), then growth up to the cap again.
const afterStartScript = (cap: boolean): string => `
  const v8 = await import('node:v8')
  const { capYoungGeneration, afterStart } = await import(${JSON.stringify(capModule)})
  if (${String(cap)}) capYoungGeneration()
  const space = (name) => v8.getHeapSpaceStatistics().find(s => s.space_name === name)
  ${CHURN}
  // The start: the young generation grown, 20 MB of old-generation objects dropped again.
  let start = Array.from({ length: 200_000 }, (_, i) => ({ i, s: 'start' + i }))
  for (let i = 0; i < 20 && space('new_space').space_size < 16 * 1024 * 1024; i++) await churn(500_000)
  const before = { young: space('new_space').space_size, old: space('old_space').space_used_size }
  let done
  const work = new Promise(resolve => { done = resolve })
  // A server's listening socket keeps its event loop alive (afterStart's own timer does not).
  const alive = setInterval(() => {}, 1000)
  const settled = afterStart(work)
  start = null
  done()
  await settled
  const after = { young: space('new_space').space_size, old: space('old_space').space_used_size }
  // Traffic afterwards: the young generation grows back, up to the cap only.
  await churn(3_000_000)
  const held = []
  for (let i = 0; i < 1_500_000; i++) held.push({ a: i, b: 'y' + i })
  held.length = 0
  await new Promise(resolve => setImmediate(resolve))
  clearInterval(alive)
  process.stdout.write(JSON.stringify({ before, after, later: space('new_space').space_size }))
`
const runAfterStart = (cap: boolean): { before: { young: number, old: number }, after: { young: number, old: number }, later: number } => JSON.parse(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', afterStartScript(cap)], { encoding: 'utf8' }))

t.test('after the start\'s work, one memory-reducing collection; then the young generation grows back up to the cap only', async t => {
  const capped = runAfterStart(true)
  const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`
  t.ok(capped.before.young >= 16 * 1024 * 1024, `grown at the start: ${mb(capped.before.young)}`)
  t.ok(capped.after.young <= 2 * 1024 * 1024, `shrunk: ${mb(capped.after.young)}`)
  t.ok(capped.after.old < capped.before.old - 5 * 1024 * 1024, `the start's garbage collected: ${mb(capped.before.old)} -> ${mb(capped.after.old)}`)
  t.ok(capped.later > capped.after.young && capped.later <= 16 * 1024 * 1024, `grown back to the cap at most: ${mb(capped.later)}`)
  const free = runAfterStart(false)
  t.ok(free.after.young >= 16 * 1024 * 1024, `an embedding application (no cap): nothing done (${mb(free.after.young)})`)
})

// The old generation's fixed growth starts once the start's first builds are done
// (capOldGeneration): until then a heap built from nothing (a restart's rows) grows as V8 likes.
const oldGrowthScript = (capOld: boolean): string => `
  const { PerformanceObserver, constants } = await import('node:perf_hooks')
  const { capYoungGeneration, capOldGeneration } = await import(${JSON.stringify(capModule)})
  capYoungGeneration()
  if (${String(capOld)}) capOldGeneration()
  let majors = 0
  new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++ }).observe({ entryTypes: ['gc'] })
  // ~150 MB of rows kept (a restart at 100,000 entries builds ~70 MB).
  const rows = []
  for (let i = 0; i < 1_200_000; i++) {
    rows.push({ id: 'post-' + i, file: null, rev: i, order: null, at: i })
    if (i % 50_000 === 0) await new Promise(resolve => setImmediate(resolve))
  }
  await new Promise(resolve => setImmediate(resolve))
  process.stdout.write(String(majors))
`
const fullCollections = (capOld: boolean): number => Number(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', oldGrowthScript(capOld)], { encoding: 'utf8' }))

t.test('the old generation grows as V8 likes until the first builds are done, then at its fixed rate', async t => {
  const duringStart = fullCollections(false)
  const after = fullCollections(true)
  t.ok(after > duringStart, `full collections building the same rows: ${duringStart} during the start, ${after} after capOldGeneration`)
})

// Saves promote garbage into an old generation of index rows (tenth pass): the fixed growth lets it
// reach 1.5 times its live size before the next full collection, not 1.2 (each full collection
// marks every row: 2-3 instead of 4-6 per 1,600 saves at 10,000 entries).
const steadyScript = (percent: number | null): string => `
  const v8 = await import('node:v8')
  const { PerformanceObserver, constants } = await import('node:perf_hooks')
  const { capYoungGeneration, capOldGeneration } = await import(${JSON.stringify(capModule)})
  capYoungGeneration()
  capOldGeneration()
  // The ninth pass's setting, for the comparison (set again: the cap sets its own when it is reached).
  const compare = () => { if (${String(percent !== null)}) v8.setFlagsFromString('--heap-growing-percent=${String(percent)}') }
  compare()
  // ~40 MB of rows kept.
  const rows = []
  for (let i = 0; i < 320_000; i++) rows.push({ id: 'post-' + i, file: null, rev: i, order: null, at: i })
  await new Promise(resolve => setImmediate(resolve))
  let majors = 0
  new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++ }).observe({ entryTypes: ['gc'] })
  // Per-save objects kept a while (history documents, journal records): promoted, then dropped.
  const ring = new Array(300_000).fill(null)
  for (let i = 0; i < 3_000_000; i++) {
    ring[i % ring.length] = { i, s: 'saved ' + i, a: [i, i + 1] }
    if (i % 20_000 === 0) { compare(); await new Promise(resolve => setImmediate(resolve)) }
  }
  await new Promise(resolve => setImmediate(resolve))
  process.stdout.write(String(majors + rows.length * 0))
`
const steadyFullCollections = (percent: number | null): number => Number(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', steadyScript(percent)], { encoding: 'utf8' }))

t.test('under steady promotion the old generation grows by half its live size between full collections', async t => {
  const now = steadyFullCollections(null)
  const ninthPass = steadyFullCollections(20)
  t.ok(now > 0, `some full collections: ${now}`)
  t.ok(now * 1.3 <= ninthPass, `full collections for the same promoted garbage: ${now}, with 20 % growth ${ninthPass}`)
})

// A burst of saves (eleventh pass): while saves come in fast (noteSave, 50 within a second) the old
// generation grows by its whole live size between full collections, not by half; once no save came
// for 3 s, by half again. An editor's few saves a second are no burst.
const burstScript = `
  const { PerformanceObserver, constants } = await import('node:perf_hooks')
  const { capYoungGeneration, capOldGeneration, noteSave } = await import(${JSON.stringify(capModule)})
  capYoungGeneration()
  capOldGeneration()
  // ~20 MB of rows kept.
  const rows = []
  for (let i = 0; i < 160_000; i++) rows.push({ id: 'post-' + i, file: null, rev: i, order: null, at: i })
  await new Promise(resolve => setImmediate(resolve))
  let majors = 0
  new PerformanceObserver(list => { for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++ }).observe({ entryTypes: ['gc'] })
  // Per-save objects kept a while (history documents, journal records): promoted, then dropped;
  // \`saves\` saves noted over the run (spread evenly).
  const ring = new Array(300_000).fill(null)
  const promote = async (saves) => {
    const before = majors
    const every = saves > 0 ? Math.floor(5_000_000 / saves) : Infinity
    for (let i = 0; i < 5_000_000; i++) {
      ring[i % ring.length] = { i, s: 'saved ' + i, a: [i, i + 1] }
      if (i % every === 0) noteSave()
      if (i % 20_000 === 0) await new Promise(resolve => setImmediate(resolve))
    }
    // The last full collection's limit was set under the phase's growth: one more to end the phase.
    await new Promise(resolve => setImmediate(resolve))
    return majors - before
  }
  const editor = await promote(3)
  const burst = await promote(3_000)
  await new Promise(resolve => setTimeout(resolve, 5500))
  const after = await promote(0)
  process.stdout.write(JSON.stringify({ editor, burst, after, rows: rows.length }))
`

t.test('during a burst of saves the old generation grows by its live size between full collections; after a quiet period by half again', async t => {
  const r = JSON.parse(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--input-type=module', '-e', burstScript], { encoding: 'utf8' })) as Record<string, number>
  t.ok(r.editor! > 0 && r.after! > 0, `full collections without a burst: ${r.editor!} (an editor's saves), ${r.after!} (after the quiet period)`)
  t.ok(r.burst! * 1.3 <= r.editor!, `full collections for the same promoted garbage: ${r.burst!} during a burst, ${r.editor!} without`)
  t.ok(r.burst! * 1.3 <= r.after!, `back to half once the burst is over: ${r.after!} full collections`)
})
