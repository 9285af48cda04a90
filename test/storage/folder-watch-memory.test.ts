// The folder watcher lists a tree's folders a few at a time: listing all of a Hugo site's page
// bundles at once (one opendir each, glibc's 32 KB buffer apiece) took hundreds of megabytes at its
// peak and left ~100 MB in the service thread's malloc heap (issue 18, eleventh pass).
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fromRoot } from '../helpers/repo-root.js'

const watchModule = fromRoot('dist/lib/storage/folder-watch.js')
const YEARS = 20
const BUNDLES_PER_YEAR = 200

// A fresh process (its peak RSS is the watch's own): watches the tree, then a file added in the
// last bundle must be told; prints the peak RSS growth in KB and whether the file was told.
const script = (root: string): string => `
  const { readFileSync, writeFileSync } = await import('node:fs')
  const { FolderWatch } = await import(${JSON.stringify(watchModule)})
  const peakKb = () => Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1])
  const before = peakKb()
  const told = new Set()
  const w = await new FolderWatch(${JSON.stringify(root)}, { onPath: p => { told.add(p) }, onLost: () => {} }).start()
  const grown = peakKb() - before
  const file = ${JSON.stringify(path.join(root, `y${YEARS - 1}`, `b${BUNDLES_PER_YEAR - 1}`, 'new.md'))}
  writeFileSync(file, 'x')
  const deadline = Date.now() + 5000
  while (!told.has(file) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
  w.close()
  process.stdout.write(JSON.stringify({ grown, told: told.has(file) }))
`

t.test('watching 4,000 page-bundle folders keeps the peak memory small, and every folder is watched', async t => {
  const root = mkdtempSync(path.join(tmpdir(), 'folder-watch-memory-'))
  t.teardown(() => { rmSync(root, { recursive: true, force: true }) })
  for (let y = 0; y < YEARS; y++) {
    for (let b = 0; b < BUNDLES_PER_YEAR; b++) {
      const dir = path.join(root, `y${y}`, `b${b}`)
      mkdirSync(dir, { recursive: true })
      writeFileSync(path.join(dir, 'index.md'), '---\ntitle: x\n---\n')
    }
  }
  // Without the test runner's NODE_OPTIONS (its loader hooks start threads of their own); a small
  // young generation, so that its growth (up to 32 MB) is not what is measured.
  const out = JSON.parse(execFileSync('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '--max-semi-space-size=1', '--input-type=module', '-e', script(root)], { encoding: 'utf8' })) as { grown: number, told: boolean }
  t.ok(out.told, 'a file added in the last folder listed is told')
  // All 4,000 listed at once: 96-97 MB at the peak (glibc's directory buffers); 8 at a time: 20 MB.
  t.ok(out.grown < 48 * 1024, `peak RSS grew by ${Math.round(out.grown / 1024)} MB while the tree was watched`)
})
