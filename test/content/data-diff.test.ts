import t from 'tap'
import { isDeepStrictEqual } from 'node:util'
import { diffData, isPlainObject, type DataChange, type DataPath } from '../../lib/content/data-diff.js'

/** The walk as it was before issue 18's fast paths (isDeepStrictEqual first at every level). */
function reference (before: unknown, after: unknown, max = 16): DataChange[] {
  const out: DataChange[] = []
  // More than `max` changes under one value replace it whole.
  const walk = (b: unknown, a: unknown, path: DataPath): void => {
    const start = out.length
    walkValue(b, a, path)
    if (out.length - start > max) out.splice(start, out.length - start, { op: 'set', path, value: a })
  }
  const walkValue = (b: unknown, a: unknown, path: DataPath): void => {
    if (isDeepStrictEqual(b, a)) return
    if (isPlainObject(b) && isPlainObject(a) && (Object.keys(a).length > 0 || Object.keys(b).length === 0)) {
      for (const key of Object.keys(b)) {
        if (!Object.hasOwn(a, key)) out.push({ op: 'delete', path: [...path, key] })
        else walk(b[key], a[key], [...path, key])
      }
      for (const key of Object.keys(a)) if (!Object.hasOwn(b, key)) out.push({ op: 'add', path: [...path, key], value: a[key] })
      return
    }
    if (Array.isArray(b) && Array.isArray(a) && b.length > 0 && a.length > 0) {
      if (b.length === a.length) {
        for (let i = 0; i < a.length; i++) walk(b[i], a[i], [...path, i])
        return
      }
      if (a.length > b.length && b.every((v, i) => isDeepStrictEqual(v, a[i]))) {
        for (let i = b.length; i < a.length; i++) out.push({ op: 'add', path: [...path, i], value: a[i] })
        return
      }
      const removed: number[] = []
      let j = 0
      for (let i = 0; i < b.length; i++) {
        if (j < a.length && isDeepStrictEqual(b[i], a[j])) j++
        else removed.push(i)
      }
      if (j === a.length) {
        for (const i of removed.reverse()) out.push({ op: 'delete', path: [...path, i] })
        return
      }
    }
    out.push({ op: 'set', path, value: a })
  }
  walk(before, after, [])
  return out
}

t.test('diffData gives the changes the walk without its fast paths gave', async t => {
  const scalars: unknown[] = [0, -0, 1, NaN, '', 'a', 'b', true, false, null, undefined, new Date(0), new Date(1)]
  let seed = 11
  const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const value = (depth: number): unknown => {
    const kind = depth > 2 ? 0 : rand(4)
    if (kind === 0 || kind === 1) return scalars[rand(scalars.length)]
    if (kind === 2) return Array.from({ length: rand(4) }, () => value(depth + 1))
    const o: Record<string, unknown> = {}
    for (let i = rand(4); i > 0; i--) o['kxyz'[rand(4)]!] = value(depth + 1)
    return o
  }
  /** A copy with a few random edits (so that most pairs share most of their data). */
  const mutate = (v: unknown, depth: number): unknown => {
    if (rand(5) === 0) return value(depth)
    if (Array.isArray(v)) {
      const copy = v.map(x => mutate(x, depth + 1))
      if (rand(4) === 0) copy.push(value(depth + 1))
      if (rand(4) === 0 && copy.length > 0) copy.splice(rand(copy.length), 1)
      return copy
    }
    if (isPlainObject(v) && !(v instanceof Date)) {
      const copy: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(v)) if (rand(6) !== 0) copy[k] = mutate(x, depth + 1)
      if (rand(4) === 0) copy['kxyz'[rand(4)]!] = value(depth + 1)
      return copy
    }
    return v
  }
  let changed = 0
  for (let i = 0; i < 3000; i++) {
    const before = value(0)
    const after = rand(3) === 0 ? before : mutate(before, 0)
    const got = diffData(before, after, 4096)
    if (got.length > 0) changed++
    if (!isDeepStrictEqual(got, reference(before, after))) {
      t.fail(`pair ${i}: ${JSON.stringify([before, after])}`)
      return
    }
  }
  t.ok(changed > 300, `many pairs differ (${changed})`)
  t.same(diffData({ a: 0 }, { a: -0 }, 10), [{ op: 'set', path: ['a'], value: -0 }], '0 and -0 differ')
  t.same(diffData({ a: NaN }, { a: NaN }, 10), [], 'NaN equals NaN')
  t.same(diffData({ a: [] }, { a: [] }, 10), [], 'two empty lists')
  t.same(diffData({ a: {} }, { a: {} }, 10), [], 'two empty objects')
})

t.test('a value holding more changes than 64 KiB of reparsing allows is replaced whole', async t => {
  const before = { tags: Array.from({ length: 40 }, (_, i) => `t${i}`), title: 'x' }
  const after = { tags: before.tags.map(tag => `${tag}!`), title: 'x' }
  t.equal(diffData(before, after, 1_000).length, 40, 'a 1 KB text: each item placed (65 changes allowed)')
  t.same(diffData(before, after, 64 * 1024), [{ op: 'set', path: ['tags'], value: after.tags }], 'a 64 KB text: the list whole (16 allowed)')
  t.same(diffData(before, after, 1_000), reference(before, after, 65))
})
