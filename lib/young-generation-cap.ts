/**
 * Caps V8's young generation (and the old generation's growth factor) for the `git-cms` process (not for applications that embed the
 * library: their V8 settings are theirs).
 *
 * Why: under load V8 doubles the young generation's two semi-spaces up to 16 MB each and keeps
 * them committed; with the index out of the heap, that was the largest part of the server's
 * resident memory after warm-up. Semi-spaces of 8 MB measured the same request latencies. V8 reads
 * `--max-semi-space-size` only when the process starts, but it reads `--semi-space-growth-factor`
 * whenever it grows the young generation: once the semi-spaces reach the cap, growth is turned off.
 * It is checked after every garbage collection (the only time the young generation grows).
 *
 * A worker thread undoes it: V8 sets up each new isolate's heap with a growth factor of at least 2,
 * and the flag is the process's (measured: the reads bench's server grew to two 16 MB semi-spaces
 * after the index and search workers ran, 16 MB more RSS, in every run). Setting it again on the
 * worker's `online` event is too late: that event waits for this thread's event loop, and the
 * collections this thread runs meanwhile (hundreds of milliseconds of work at the first list) grow
 * it. So the service starts its workers with `startWorker`, which waits (blocking this thread, a
 * few milliseconds, once per index or search build) until the worker's first line of JavaScript
 * runs, its heap set up, and sets the flags again before this thread allocates anything more.
 * Before the cap is reached there is nothing to undo (the growth factor is V8's own, which a heap
 * setup leaves as it is), so `startWorker` does not wait then: the cap, once reached, waits for the
 * heap setup of every worker started that way that has not said it is set up, before it turns
 * growth off (a restart starts its stat worker before the young generation reaches the cap: that
 * wait was 50-230 ms of a blocked main thread on the way to the first list, issue 18).
 * Other workers get them set again when online. Module loader hooks (`--import` with
 * `module.register`) start threads of their own that are not seen: under them the cap may be passed.
 */
import v8 from 'node:v8'
import { PerformanceObserver } from 'node:perf_hooks'
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads'
import { createRequire } from 'node:module'

/** The size each semi-space may reach. */
const MAX_SEMI_SPACE_BYTES = 8 * 1024 * 1024

/**
 * After each full collection V8 lets the old generation grow to its live size times a factor it
 * picks from the collector's speed, up to 4x on a machine with gigabytes of memory (its default
 * limit): with 60 MB of index rows alive (100,000 entries) the heap grew to 250 MB of mostly
 * garbage before the next full collection (issue 18). A fixed factor keeps the heap near its live
 * size at the cost of more frequent (incremental) full collections; V8 reads the flag whenever it
 * computes the next limit (and never grows it by less than a few megabytes). 1.2 rather than 1.5:
 * reads bench at 10,000 entries, back to back, the old generation after warm-up 38.5 MB instead of
 * 45 (RSS -6 to -8 MB), server CPU per request unchanged (0.91-1.03 ms against 0.97-1.10).
 * 1.5 rather than 1.2 (tenth pass): a burst of saves promotes ~10 KB per save (history documents,
 * journal records, replaced rows) into that old generation, and every full collection marks all of
 * it (on V8's helper threads mostly): at 10,000 entries 4-6 full collections per 1,600 saves at 20 %,
 * 2-3 at 50 %, V8's helper threads -0.04 ms per save, the server's CPU per save -5 to -8 %; RSS after
 * warm-up +2 to +9 MB (see ARCHITECTURE, "Tenth pass: garbage collection during saves").
 */
const OLD_GENERATION_GROWING_PERCENT = 50

/**
 * The old generation's fixed growth during a burst of saves (BURST_SAVES within BURST_WINDOW_MS,
 * counted by `noteSave`): the heap may reach twice its live size before the next full collection,
 * so a burst of saves (~11 KB promoted per save) marks the whole heap half as often (at 10,000
 * entries 2 full collections per 1,600 saves instead of 4-6; V8's helper threads -0.03 ms per save).
 * After BURST_QUIET_MS without a save the growth is OLD_GENERATION_GROWING_PERCENT again, and V8's
 * memory reducer returns the burst's garbage once the process is idle (measured: ~10 s after a burst,
 * 190-200 MB back to ~148 MB at 10,000 entries, as without this). Reads never count: the RSS after a
 * warm-up of reads is unchanged. (Semi-spaces of 16 MB during the burst were measured too and not
 * kept: half the scavenges, each twice as long, no less CPU; see ARCHITECTURE, "Eleventh pass: the
 * young generation during saves".)
 */
const BURST_OLD_GENERATION_GROWING_PERCENT = 100

/** Saves within BURST_WINDOW_MS that make a burst (an editor at work makes a few a second at most). */
const BURST_SAVES = 50

/** The window BURST_SAVES are counted in. */
const BURST_WINDOW_MS = 1000

/** How long without a save ends a burst. */
const BURST_QUIET_MS = 3000

/** How often the end of a burst is looked for. */
const BURST_CHECK_MS = 1000

/**
 * The old generation's fixed growth starts once the start's first collection is built
 * (`capOldGeneration`, called by the content store's warm-up), or this long after
 * `capYoungGeneration` at the latest. Until then V8 grows it as it likes: a restart at 100,000 entries builds ~70 MB of rows from
 * an almost empty heap, and with 20 % growth that was a full collection every few megabytes, each
 * marking the whole heap (5 full collections before the first list, 1 without; 200-400 ms of the
 * service thread's garbage collection at the eighth pass; issue 18, ninth pass). The young
 * generation is capped from the first line as before (not capping it during the start left it at
 * 32 MB through a long warm-up: RSS after warm-up +10-15 MB at 1,000 collections; so was the old
 * generation, until the first collection rather than the whole warm-up: +0-30 MB there).
 */
const OLD_GENERATION_CAP_AT_THE_LATEST_MS = 30_000

/** Sets the old generation's fixed growth from now on; null when nothing is capped or it is set. */
let capOld: (() => void) | null = null

/** Sets the flags again (after a worker's heap setup reset them); null when nothing is capped. */
let reapply: (() => void) | null = null

/** Whether growth is turned off (the cap reached); false when nothing is capped. */
let growthOff = false

/** Turns growth back on until the cap is reached again (the young generation shrank); null when nothing is capped. */
let rearm: (() => void) | null = null

/** Counts a save towards a burst (see BURST_OLD_GENERATION_GROWING_PERCENT); null when nothing is capped. */
let onSave: (() => void) | null = null

/** Whether `afterStart` was called (once per process). */
let afterStartCalled = false

/** The heap-setup flags of workers `startWorker` started before the cap was reached, until each is set up or exits. */
const settingUp = new Set<Int32Array>()

/** The longest `startWorker` waits for a worker's first line of JavaScript. */
const WORKER_START_WAIT_MS = 2000

/** What a worker started by `startWorker` runs first: it says its heap is set up, then loads its module (a script, or a module under `--input-type=module`). */
const WORKER_PRELUDE = `
const { workerData } = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:worker_threads') : require('node:worker_threads')
Atomics.store(workerData.heapSetUp, 0, 1)
Atomics.notify(workerData.heapSetUp, 0)
import(workerData.workerModule)
`

/**
 * What the spare worker runs: it says its heap is set up, then waits for the module to load and its
 * `workerData` on its own port (or for that port to close: then it ends, exit code 0). The module's
 * `import { workerData } from 'node:worker_threads'` sees the data given (the builtin's ES module
 * view is made on its first import, after the data is set, and synced anyway).
 */
const SPARE_PRELUDE = `
const builtin = (name) => typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule(name) : require(name);
const wt = builtin('node:worker_threads');
const { heapSetUp, setUp } = wt.workerData;
Atomics.store(heapSetUp, 0, 1);
Atomics.notify(heapSetUp, 0);
setUp.once('message', (start) => {
  setUp.close();
  wt.workerData = start.workerData;
  builtin('node:module').syncBuiltinESMExports();
  import(start.workerModule);
});
`

/** How long the spare worker waits to be taken before it ends. */
const SPARE_IDLE_MS = 5000

/** A worker thread started with the cap, its heap set up before the cap can be reached; the next `startWorker` takes it. */
let spare: { worker: Worker, heapSetUp: Int32Array, setUp: MessagePort, timer: NodeJS.Timeout } | null = null

/**
 * Starts the spare worker (see capYoungGeneration): unref'd while it waits, ended when not taken
 * within SPARE_IDLE_MS.
 */
function startSpare (): void {
  const heapSetUp = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(SPARE_PRELUDE, { eval: true, workerData: { heapSetUp, setUp: port2 }, transferList: [port2] })
  worker.unref()
  port1.unref()
  settingUp.add(heapSetUp)
  const done = (): void => { settingUp.delete(heapSetUp) }
  worker.once('online', done).once('exit', done)
  worker.once('exit', () => { if (spare?.worker === worker) endSpare() })
  const timer = setTimeout(() => { if (spare?.worker === worker) endSpare() }, SPARE_IDLE_MS).unref()
  spare = { worker, heapSetUp, setUp: port1, timer }
}

/** Ends the spare worker, if any, when not taken. */
function endSpare (): void {
  if (spare === null) return
  clearTimeout(spare.timer)
  spare.setUp.close()
  spare = null
}

/**
 * Starts a worker thread, and when this process capped its young generation, sets the flags again
 * once the worker's heap is set up (see above), before returning.
 * @param file the worker's module
 * @param workerData its `workerData` (a plain object: the worker also sees two fields of the start's own)
 * @returns the worker
 */
export function startWorker (file: URL, workerData: object): Worker {
  if (reapply === null) return new Worker(file, { workerData })
  if (spare !== null) {
    // The spare's heap was set up at the start: nothing to wait for once it said so.
    const { worker, heapSetUp, setUp, timer } = spare
    spare = null
    clearTimeout(timer)
    setUp.postMessage({ workerModule: file.href, workerData: { ...workerData, heapSetUp, workerModule: file.href } })
    setUp.close()
    worker.ref()
    if (growthOff && Atomics.load(heapSetUp, 0) === 0) {
      Atomics.wait(heapSetUp, 0, 0, WORKER_START_WAIT_MS)
      reapply()
    }
    return worker
  }
  const heapSetUp = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(WORKER_PRELUDE, { eval: true, workerData: { ...workerData, heapSetUp, workerModule: file.href } })
  if (!growthOff) {
    // Nothing to undo yet; the cap waits for this heap setup if it is reached first (waitForHeapSetUps).
    settingUp.add(heapSetUp)
    const done = (): void => { settingUp.delete(heapSetUp) }
    worker.once('online', done).once('exit', done)
    return worker
  }
  Atomics.wait(heapSetUp, 0, 0, WORKER_START_WAIT_MS)
  reapply()
  return worker
}

/** Waits until every worker started before the cap was reached has its heap set up (see above). */
function waitForHeapSetUps (): void {
  for (const heapSetUp of settingUp) Atomics.wait(heapSetUp, 0, 0, WORKER_START_WAIT_MS)
  settingUp.clear()
}

/**
 * Starts watching the young generation's size; once its semi-spaces reach the cap, stops growth.
 * @returns a function that stops watching
 */
export function capYoungGeneration (): () => void {
  let capped = false
  // Not during the start's first builds (see OLD_GENERATION_CAP_AT_THE_LATEST_MS).
  let oldCapped = false
  // A burst of saves (see BURST_OLD_GENERATION_GROWING_PERCENT): its end looked for every BURST_CHECK_MS.
  let quiet: NodeJS.Timeout | null = null
  const apply = (): void => {
    // The old generation: see OLD_GENERATION_GROWING_PERCENT.
    if (oldCapped) v8.setFlagsFromString(`--heap-growing-percent=${quiet !== null ? BURST_OLD_GENERATION_GROWING_PERCENT : OLD_GENERATION_GROWING_PERCENT}`)
    if (capped) v8.setFlagsFromString('--semi-space-growth-factor=1')
  }
  const capOldNow = (): void => {
    clearTimeout(capOldLater)
    capOld = null
    oldCapped = true
    apply()
  }
  const capOldLater = setTimeout(capOldNow, OLD_GENERATION_CAP_AT_THE_LATEST_MS).unref()
  capOld = capOldNow
  const check = (): void => {
    if (capped) return
    const newSpace = v8.getHeapSpaceStatistics().find(s => s.space_name === 'new_space')
    // new_space counts both semi-spaces.
    if (newSpace !== undefined && newSpace.space_size >= 2 * MAX_SEMI_SPACE_BYTES) {
      capped = true
      growthOff = true
      waitForHeapSetUps()
      apply()
      observer.disconnect()
    }
  }
  const observer = new PerformanceObserver(check)
  observer.observe({ entryTypes: ['gc'] })
  rearm = () => {
    if (!capped) return
    capped = false
    growthOff = false
    // V8's own factor (the one a heap setup leaves): the young generation grows back to the cap as needed.
    v8.setFlagsFromString('--semi-space-growth-factor=2')
    observer.observe({ entryTypes: ['gc'] })
  }
  let windowStart = 0
  let inWindow = 0
  let lastSave = 0
  const endBurst = (): void => {
    if (quiet === null || Date.now() - lastSave < BURST_QUIET_MS) return
    clearInterval(quiet)
    quiet = null
    apply()
  }
  onSave = () => {
    const now = Date.now()
    lastSave = now
    if (quiet !== null) return
    if (now - windowStart > BURST_WINDOW_MS) {
      windowStart = now
      inWindow = 0
    }
    if (++inWindow < BURST_SAVES) return
    quiet = setInterval(endBurst, BURST_CHECK_MS).unref()
    apply()
  }
  // A new worker's heap setup resets the growth factor (see above): set the flags again.
  const onWorker = (worker: Worker): void => { worker.once('online', apply) }
  process.on('worker', onWorker)
  reapply = apply
  apply()
  check()
  // A worker started now has its heap set up long before the young generation reaches the cap:
  // the first startWorker takes it without waiting (at a restart, the stat worker's; without it,
  // a restart at 10,000 entries reached the cap before the stat worker started, and its main
  // thread waited 50-100 ms for the worker's bootstrap).
  if (!capped) startSpare()
  return () => {
    clearTimeout(capOldLater)
    if (quiet !== null) clearInterval(quiet)
    quiet = null
    onSave = null
    capOld = null
    observer.disconnect()
    process.off('worker', onWorker)
    reapply = null
    rearm = null
    growthOff = false
    settingUp.clear()
    endSpare()
  }
}

/**
 * Counts one save (the `mutate` command's): while saves come in fast the old generation grows by its
 * live size between full collections, not by half of it (see BURST_OLD_GENERATION_GROWING_PERCENT).
 * Nothing when this process did not cap its young generation.
 */
export function noteSave (): void {
  onSave?.()
}

/**
 * Starts the old generation's fixed growth (see OLD_GENERATION_GROWING_PERCENT), once the start's
 * first builds are done; nothing when this process did not cap its young generation, or it is set
 * already (`afterStart` sets it too, and it is set 30 s after the cap at the latest).
 */
export function capOldGeneration (): void {
  capOld?.()
}

/**
 * Runs a function with V8's flags as they were before `capYoungGeneration` set its own, then sets
 * them again. For `bin/git-cms`'s code cache: V8 takes a cache only under the flags it was made
 * with, and the executable loads its bundle before the cap sets them.
 * @param fn what to run (synchronous, short: the young generation may grow meanwhile)
 * @returns what it returns
 */
export function withStartFlags<T> (fn: () => T): T {
  const restore = reapply
  if (restore === null) return fn()
  // V8's defaults: no fixed old generation growth, semi-spaces doubling.
  v8.setFlagsFromString('--heap-growing-percent=0')
  v8.setFlagsFromString('--semi-space-growth-factor=2')
  try {
    return fn()
  } finally {
    restore()
  }
}

/** How long after the start's work is done the memory-reducing collection runs (more start work meanwhile waits for it). */
const AFTER_START_QUIET_MS = 100

/**
 * Once the start's own work is done (the collection indexes warmed, their full-text indexes built
 * or loaded and persisted), runs one memory-reducing full collection, when this process capped its
 * young generation (`git-cms`, not an embedding application): what the start allocated and dropped
 * (promoted rows, snapshot and segment buffers, the young generation grown to its cap or past it
 * inside a long synchronous step) is returned to the system then, instead of staying committed until
 * V8's memory reducer notices an idle process (tens of seconds, never under steady traffic; issue 18).
 * It goes through the inspector's `HeapProfiler.collectGarbage` (an in-process session, the supported
 * way to ask V8 for it: a low-memory notification, which also shrinks the young generation to its
 * minimum); afterwards the young generation may grow again up to the cap. Without the inspector
 * (a Node built without it) nothing is done.
 * @param work resolves (or rejects) when the start's work is done; only the first call counts
 * @returns resolves once the collection ran (or was skipped)
 */
export async function afterStart (work: Promise<unknown>): Promise<void> {
  if (afterStartCalled) return
  afterStartCalled = true
  await work.catch(() => {})
  capOldGeneration()
  if (rearm === null) return
  await new Promise(resolve => setTimeout(resolve, AFTER_START_QUIET_MS).unref())
  if (rearm === null) return
  await reduceMemory()
  rearm?.()
}

/** One memory-reducing full collection through an in-process inspector session. */
async function reduceMemory (): Promise<void> {
  let inspector: typeof import('node:inspector')
  try {
    // Loaded when used (2 ms at start otherwise); `require`, as `import()` is not available in the executable's script.
    inspector = createRequire(import.meta.url)('node:inspector') as typeof import('node:inspector')
  } catch {
    return
  }
  const session = new inspector.Session()
  try {
    session.connect()
    await new Promise<void>((resolve, reject) => { session.post('HeapProfiler.collectGarbage', err => { if (err !== null) reject(err); else resolve() }) })
  } catch {
    // Nothing to do: the heap stays as it is.
  } finally {
    session.disconnect()
  }
}
