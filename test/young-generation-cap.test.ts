import t from 'tap'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// Runs in a fresh process: the cap changes a V8 flag for the whole process.
const capModule = fileURLToPath(new URL('../dist/lib/young-generation-cap.js', import.meta.url))
const script = (cap: boolean): string => `
  const v8 = await import('node:v8')
  const { capYoungGeneration } = await import(${JSON.stringify(capModule)})
  if (${String(cap)}) capYoungGeneration()
  const keep = []
  for (let i = 0; i < 3_000_000; i++) {
    const o = { a: i, b: 'x' + i, c: [i, { d: i }] }
    if (i % 100 === 0) keep.push(o)
    if (keep.length > 5000) keep.splice(0, 2500)
    // Let the gc observer run now and then, as a server's event loop does between requests.
    if (i % 100_000 === 0) await new Promise(resolve => setImmediate(resolve))
  }
  const space = v8.getHeapSpaceStatistics().find(s => s.space_name === 'new_space')
  process.stdout.write(String(space.space_size))
`
const newSpace = (cap: boolean): number => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(cap)], { encoding: 'utf8' }))

t.test('the executable caps the young generation at two 8 MB semi-spaces', async t => {
  const capped = newSpace(true)
  const free = newSpace(false)
  t.ok(capped <= 17 * 1024 * 1024, `capped: ${(capped / 1048576).toFixed(1)} MB`)
  t.ok(free > capped, `without the cap V8 grows it further: ${(free / 1048576).toFixed(1)} MB`)
})
