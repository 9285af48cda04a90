import t from 'tap'
import { LruCache } from '../../lib/storage/lru-cache.js'

t.test('evicts the least recently used values beyond the weight bound', async t => {
  const cache = new LruCache<string, string>(10, v => v.length)
  cache.set('a', 'aaaa')
  cache.set('b', 'bbbb')
  t.equal(cache.get('a'), 'aaaa', 'a is now the most recently used')
  cache.set('c', 'cccc')
  t.equal(cache.get('b'), undefined, 'b went first')
  t.equal(cache.get('a'), 'aaaa')
  t.equal(cache.get('c'), 'cccc')
  cache.set('a', 'a')
  cache.set('d', 'dddd')
  t.same(['a', 'c', 'd'].map(k => cache.get(k)), ['a', 'cccc', 'dddd'], 'a replaced value is re-weighed')
  cache.set('huge', 'x'.repeat(11))
  t.equal(cache.get('huge'), undefined, 'a value heavier than the bound is not kept')
  t.equal(cache.get('d'), 'dddd', 'and evicts nothing')
})

t.test('counts entries by default', async t => {
  const cache = new LruCache<number, number>(2)
  cache.set(1, 1)
  cache.set(2, 2)
  cache.set(3, 3)
  t.same([cache.get(1), cache.get(2), cache.get(3)], [undefined, 2, 3])
})

t.test('a bound on the number of values as well as their weight; delete forgets one', async t => {
  const cache = new LruCache<string, string>(100, v => v.length, 2)
  cache.set('a', 'xx')
  cache.set('b', 'yyy')
  t.equal(cache.get('a'), 'xx', 'a used: b is now the oldest')
  cache.set('c', 'z')
  t.equal(cache.size, 2, 'at most 2 values, though their weight is far below 100')
  t.equal(cache.get('b'), undefined, 'the least recently used went')
  t.equal(cache.weight, 3)
  cache.delete('a')
  cache.delete('missing')
  t.equal(cache.get('a'), undefined)
  t.equal(cache.size, 1)
  t.equal(cache.weight, 1)
})
