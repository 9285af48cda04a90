import t from 'tap'
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { sweepTempFiles } from '../../lib/storage/temp-sweep.js'
import { TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

const tick = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 30)) }

t.test('removes our temp files at any depth and nothing else', async t => {
  const dir = t.testdir({ 'a.md': 'a', [`${TEMP_PREFIX}0123-a.md`]: 'partial', sub: { [`${TEMP_PREFIX}4567-b.md`]: 'partial', 'b.md': 'b' } })
  await sweepTempFiles([dir, path.join(dir, 'missing')])
  t.same((await readdir(dir)).sort(), ['a.md', 'sub'])
  t.same(await readdir(path.join(dir, 'sub')), ['b.md'])
})

t.test('with a cut-off, a temp file created after it is kept (a write of this instance in flight)', async t => {
  const dir = t.testdir({})
  const old = path.join(dir, `${TEMP_PREFIX}aaaa-old.md`)
  await writeFile(old, 'left by a killed process')
  await tick()
  // What the instance lock's file gives: a ctime from the file system's own clock.
  const marker = path.join(dir, 'instance.lock')
  await writeFile(marker, '1')
  const cutoff = (await stat(marker)).ctimeMs
  await tick()
  await mkdir(path.join(dir, 'sub'))
  const fresh = path.join(dir, 'sub', `${TEMP_PREFIX}bbbb-new.md`)
  await writeFile(fresh, 'being written now')
  await sweepTempFiles([dir], cutoff)
  t.same((await readdir(dir)).sort(), ['instance.lock', 'sub'])
  t.same(await readdir(path.join(dir, 'sub')), [path.basename(fresh)], 'the newer temp file stays')
})
