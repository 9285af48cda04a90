import t from 'tap'
import { SchemaCompiler } from '../../lib/content/schema-tools.js'
import { commandValidators } from '../../lib/commands/command-schemas.js'

t.test('formats are checked although ajv-formats loads only for a schema that names one', async t => {
  const compiler = new SchemaCompiler()
  // A schema without a format first: the formats are not needed yet.
  const plain = compiler.validator({ type: 'object', properties: { title: { type: 'string' } } })
  t.same(plain({ title: 'x' }), [])
  t.same(plain({ title: 3 }).map(i => i.path), ['title'])
  const dated = compiler.validator({ type: 'object', properties: { date: { type: 'string', format: 'date' }, mail: { type: 'string', format: 'email' } } })
  t.same(dated({ date: '2024-02-29', mail: 'a@example.com' }), [])
  t.same(dated({ date: '2024-02-30', mail: 'nope' }).map(i => `${i.path}:${i.code}`).sort(), ['date:format', 'mail:format'])
  // Draft 2020-12 schemas get the formats too.
  const v2020 = compiler.validator({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string', format: 'uri' })
  t.same(v2020('https://example.com/'), [])
  t.same(v2020('not a uri').map(i => i.code), ['format'])
  // An unknown format is still accepted as before (strict: false), not an error.
  t.same(compiler.validator({ type: 'string', format: 'no-such-format' })('x'), [])
})

t.test('the command validators are compiled once and shared, with the same refusals', async t => {
  t.same(commandValidators.mutate({ type: 'delete_entry', collection: 'posts', id: 'x' }), { type: 'delete_entry', collection: 'posts', id: 'x' })
  t.throws(() => commandValidators.mutate({ type: 'nope' }), { message: /Unknown command type/ })
  t.throws(() => commandValidators.mutate({ type: 'delete_entry', collection: 'posts' }), { message: 'Invalid command: id is required' })
  t.throws(() => commandValidators.mutate({ type: 'delete_entry', collection: 'posts', id: 'x', extra: 1 }), { message: 'Invalid command: extra is not a known field' })
  t.throws(() => commandValidators.restore({ collection: 'posts', id: 'x', ts: 'soon' }), { message: /Invalid command: ts / })
  t.throws(() => commandValidators.publish({ id: 'x' }), { message: /Invalid command/ })
  t.same(commandValidators.publish({}), {})
})
