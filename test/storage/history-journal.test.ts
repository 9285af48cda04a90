import t, { type Test } from 'tap'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, truncateSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { decodeFrames, encodeFrame, FRAME_HEADER } from '../../lib/storage/journal-frame.js'
import { HistoryJournal } from '../../lib/storage/history-journal.js'

function tempDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cms-journal-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return path.join(dir, 'history-journal')
}

const text = (b: Buffer): string => b.toString('utf8')

t.test('frames round-trip, in order, with any payload bytes', async t => {
  const payloads = ['{"a":1}', '', 'é\u0000\uFFFF', 'x'.repeat(70_000)].map(s => Buffer.from(s, 'utf8'))
  const bytes = Buffer.concat(payloads.map(encodeFrame))
  const decoded = decodeFrames(bytes)
  t.equal(decoded.stopped, null)
  t.equal(decoded.end, bytes.byteLength)
  t.same(decoded.payloads.map(text), payloads.map(text))
  t.same(decodeFrames(Buffer.alloc(0)), { payloads: [], end: 0, stopped: null })
})

t.test('a torn tail (the last frame cut at any byte) is ignored; the frames before it are kept', async t => {
  const first = encodeFrame(Buffer.from('{"first":true}'))
  const last = encodeFrame(Buffer.from('{"second":"a longer record than the first one"}'))
  for (let cut = 1; cut < last.byteLength; cut++) {
    const decoded = decodeFrames(Buffer.concat([first, last.subarray(0, cut)]))
    if (decoded.stopped !== 'torn' || decoded.payloads.length !== 1 || decoded.end !== first.byteLength) {
      t.fail(`cut at ${cut}: ${JSON.stringify({ stopped: decoded.stopped, n: decoded.payloads.length })}`)
      return
    }
  }
  t.pass('every cut of the last frame reads as the first frame alone')
})

t.test('a checksum mismatch, bad magic, zeros or an absurd length stop the reading there', async t => {
  const a = encodeFrame(Buffer.from('{"n":1}'))
  const b = encodeFrame(Buffer.from('{"n":2}'))
  const c = encodeFrame(Buffer.from('{"n":3}'))
  // A flipped payload byte in the middle frame: it and everything after it are not trusted.
  const flipped = Buffer.from(b)
  flipped[FRAME_HEADER + 2] = flipped[FRAME_HEADER + 2]! ^ 0x01
  let d = decodeFrames(Buffer.concat([a, flipped, c]))
  t.same({ n: d.payloads.length, end: d.end, stopped: d.stopped }, { n: 1, end: a.byteLength, stopped: 'checksum' })
  // A changed length (the checksum covers it too).
  const relength = Buffer.from(b)
  relength.writeUInt32LE(b.readUInt32LE(4) - 1, 4)
  d = decodeFrames(Buffer.concat([a, relength, c]))
  t.same({ n: d.payloads.length, stopped: d.stopped }, { n: 1, stopped: 'checksum' })
  // Zeros after a crash (blocks allocated, data never written).
  d = decodeFrames(Buffer.concat([a, Buffer.alloc(64)]))
  t.same({ n: d.payloads.length, stopped: d.stopped }, { n: 1, stopped: 'bad-magic' })
  const huge = Buffer.from(b)
  huge.writeUInt32LE(0x7fffffff, 4)
  d = decodeFrames(Buffer.concat([a, huge]))
  t.same({ n: d.payloads.length, stopped: d.stopped }, { n: 1, stopped: 'too-long' })
  t.throws(() => encodeFrame(Buffer.alloc(16 * 1024 * 1024 + 1)), /over the limit/)
})

t.test('segments: appends are durable when they resolve, rotate seals, drop removes, close leaves nothing; a reopen reads what is left', async t => {
  const dir = tempDir(t)
  const journal = new HistoryJournal(dir)
  t.same(await journal.open(), [], 'a new journal has nothing to read')
  const one = journal.append([Buffer.from('r1'), Buffer.from('r2')])
  const two = journal.append([Buffer.from('r3')])
  t.equal(one.seq, two.seq, 'same segment')
  await Promise.all([one.durable, two.durable])
  const sealed = await journal.rotate()
  t.equal(sealed, one.seq)
  t.equal(await journal.rotate(), sealed, 'an empty active segment is not rotated again')
  const three = journal.append([Buffer.from('r4')])
  t.equal(three.seq, sealed + 1, 'later appends go to the next segment')
  await three.durable
  t.equal(readdirSync(dir).length, 2)
  t.ok(journal.hasSealed)
  await journal.drop(sealed)
  t.notOk(journal.hasSealed)
  t.same(readdirSync(dir), ['0000000000000002.journal'])

  // A second process (after a kill) reads the segment left, and appends after it.
  const again = new HistoryJournal(dir)
  const read = await again.open()
  t.same(read.map(s => ({ seq: s.seq, payloads: s.payloads.map(text), stopped: s.stopped })), [{ seq: 2, payloads: ['r4'], stopped: null }])
  t.ok(again.hasSealed, 'what was read is sealed: dropped once folded')
  const four = again.append([Buffer.from('r5')])
  t.equal(four.seq, 3)
  await four.durable
  await again.drop(await again.rotate())
  await again.close()
  t.same(readdirSync(dir), [], 'a clean close after the last fold leaves no segment')
  await journal.close()
})

t.test('the appends of one round are written together when the round starts, in append order, and share its durability', async t => {
  const dir = tempDir(t)
  const journal = new HistoryJournal(dir)
  await journal.open()
  const file = path.join(dir, readdirSync(dir)[0]!)
  const first = Array.from({ length: 20 }, (_, i) => journal.append([Buffer.from(`a${i}`), Buffer.from(`b${i}`)]))
  t.equal(statSync(file).size, 0, 'nothing is written by the append itself')
  t.equal(new Set(first.map(a => a.durable)).size, 1, 'one durability for the appends of one round')
  await first[0]!.durable
  const afterFirst = decodeFrames(readFileSync(file))
  t.same(afterFirst.payloads.map(text), first.flatMap((_, i) => [`a${i}`, `b${i}`]), 'every record, in append order, when the first resolves')
  t.equal(afterFirst.stopped, null)
  // Appends while a round runs go to the next one, after the records before them.
  const second = journal.append([Buffer.from('c0')])
  await new Promise<void>(resolve => setImmediate(resolve))
  const third = journal.append([Buffer.from('c1')])
  await Promise.all([second.durable, third.durable])
  t.same(decodeFrames(readFileSync(file)).payloads.map(text).slice(-2), ['c0', 'c1'])
  t.throws(() => journal.append([Buffer.from('ok'), Buffer.alloc(16 * 1024 * 1024 + 1)]), /over the limit/, 'a record over the limit refuses the whole append')
  await journal.rotate()
  t.same(decodeFrames(readFileSync(file)).payloads.map(text).slice(-2), ['c0', 'c1'], 'and queues none of it')
  await journal.close()
})

t.test('a segment with a torn tail is read up to it; appends after a reopen go to a new segment, never after the torn bytes', async t => {
  const dir = tempDir(t)
  const journal = new HistoryJournal(dir)
  await journal.open()
  const a = journal.append([Buffer.from('{"keep":1}')])
  await a.durable
  const b = journal.append([Buffer.from('{"keep":2}')])
  await b.durable
  // The process dies while the second frame is written: only part of it reached the disk.
  const file = path.join(dir, readdirSync(dir)[0]!)
  truncateSync(file, statSync(file).size - 3)
  const tornSize = statSync(file).size
  const again = new HistoryJournal(dir)
  const [segment] = await again.open()
  t.same(segment!.payloads.map(text), ['{"keep":1}'])
  t.equal(segment!.stopped, 'torn')
  t.equal(segment!.ignoredBytes, FRAME_HEADER + '{"keep":2}'.length - 3)
  const c = again.append([Buffer.from('{"next":3}')])
  t.not(c.seq, segment!.seq, 'a new segment')
  await c.durable
  t.equal(readFileSync(file).byteLength, tornSize, 'the torn segment is left as it was until dropped: nothing appended after its torn bytes')
  // Garbage written over a whole segment: nothing read from it, no throw.
  writeFileSync(path.join(dir, '0000000000000009.journal'), 'not a journal at all')
  writeFileSync(path.join(dir, 'notes.txt'), 'not a segment name: ignored')
  await again.close()
  const third = new HistoryJournal(dir)
  const segments = await third.open()
  t.same(segments.map(s => [s.seq, s.payloads.length, s.stopped]), [[1, 1, 'torn'], [2, 1, null], [9, 0, 'bad-magic']])
  t.equal(third.append([Buffer.from('x')]).seq, 10, 'the next segment comes after the highest one')
  await third.close()
  await journal.close()
})
