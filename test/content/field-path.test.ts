import t from 'tap'
import { setAtPath, parseFieldPath } from '../../lib/content/field-path.js'

t.test('setAtPath copies the path it changes and never the caller\'s data', async t => {
  const data = { title: 'Old', seo: { title: 'S', keywords: ['a', 'b'] }, blocks: [{ text: 'x' }, { text: 'y' }], body: 'B'.repeat(1000) }
  const frozen = JSON.stringify(data)
  const title = setAtPath(data, ['title'], 'New')
  t.same(title, { ...data, title: 'New' })
  const nested = setAtPath(data, parseFieldPath('seo.keywords.1'), 'c')
  t.same(nested.seo, { title: 'S', keywords: ['a', 'c'] })
  const item = setAtPath(data, parseFieldPath('blocks.0.text'), 'z')
  t.same(item.blocks, [{ text: 'z' }, { text: 'y' }])
  const appended = setAtPath(data, parseFieldPath('seo.keywords.2'), 'd')
  t.same((appended.seo as { keywords: string[] }).keywords, ['a', 'b', 'd'])
  const created = setAtPath(data, parseFieldPath('meta.og.image'), 'i.png')
  t.same(created.meta, { og: { image: 'i.png' } })
  t.equal(JSON.stringify(data), frozen, 'the input is unchanged after every call')
  t.throws(() => setAtPath(data, parseFieldPath('title.x'), 1), { name: 'BadRequestError' }, 'a string is not an object')
  t.throws(() => setAtPath(data, parseFieldPath('blocks.5'), 1), { name: 'BadRequestError' }, 'two past the end of an array')
  t.throws(() => setAtPath(data, parseFieldPath('blocks.x'), 1), { name: 'BadRequestError' }, 'not an index')
  t.throws(() => parseFieldPath('seo.__proto__.x'), { name: 'BadRequestError' })
  t.equal(JSON.stringify(data), frozen, 'and after the refusals')
})
