import t from 'tap'
import { Ajv, type ValidateFunction } from 'ajv'
import { commandValidators } from '../../lib/commands/command-schemas.js'
import { commandValidator } from '../../lib/content/command-validators.js'
import { COMMAND_AJV_OPTIONS, commandSchemas, type CommandSchemaName } from '../../lib/content/command-schema-table.js'
import { COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated } from '../../lib/content/command-validators.generated.js'
import { validatorDigest } from '../../lib/content/generated-validators.js'
import { BadRequestError } from '../../lib/errors.js'

/** One body of every kind, as a process's first requests send them. */
const firstBodies: Array<[CommandSchemaName, unknown]> = [
  ['put_entry', { type: 'put_entry', collection: 'posts', id: 'a', data: { title: 'A' } }],
  ['save_field', { type: 'save_field', collection: 'posts', id: 'a', field: 'title', value: 'B', expectedRevision: 1 }],
  ['delete_entry', { type: 'delete_entry', collection: 'posts', id: 'a' }],
  ['reorder_entries', { type: 'reorder_entries', collection: 'posts', order: ['a', 'b'] }],
  ['update_page_layout', { type: 'update_page_layout', collection: 'pages', id: 'home', layout: [{ kind: 'hero' }] }],
  ['md_block', { type: 'md_block', collection: 'posts', id: 'a', blockPath: 'body', src: 'b1', html: '<p>x</p>' }],
  ['md_edit', { type: 'md_edit', collection: 'posts', id: 'a', field: 'body', src: 'b1', before: 'x', after: 'xy', marks: [{ type: 'link', start: 0, end: 1, href: '/x' }] }],
  ['create_collection', { type: 'create_collection', collection: 'notes', schema: { type: 'object' }, format: 'md', metadata: { label: 'Notes', singletonId: null } }],
  ['delete_collection', { type: 'delete_collection', collection: 'notes' }],
  ['restore', { collection: 'posts', id: 'a', ts: 1 }],
  ['publish', { collection: 'posts', id: 'a' }]
]

// First, before anything else of this process checks a body: the first write compiled every command
// schema with ajv on the event loop (60 ms of CPU on a quiet machine, 100-400 ms under load).
t.test('the first check of every command body compiles nothing: its validators were made at build time', async t => {
  const validators = commandValidators
  const before = process.cpuUsage()
  for (const [name, body] of firstBodies) {
    if (name === 'restore') validators.restore(body)
    else if (name === 'publish') validators.publish(body)
    else validators.mutate(body)
  }
  const cpu = process.cpuUsage(before)
  const ms = (cpu.user + cpu.system) / 1000
  t.comment(`the first check of ${firstBodies.length} bodies took ${ms.toFixed(1)} ms of CPU`)
  t.ok(ms < 25, `${ms.toFixed(1)} ms of CPU, under 25`)
  t.equal(COMMAND_SCHEMAS_DIGEST, validatorDigest(commandSchemas, COMMAND_AJV_OPTIONS), 'command-validators.generated.ts is current: run node scripts/generate-config-validator.mjs')
  for (const [name] of firstBodies) t.equal(commandValidator(name), (commandValidatorsGenerated as Record<string, unknown>)[name], `${name}: the generated validator`)
})

const wrongBodies: unknown[] = [
  {},
  { type: 'put_entry' },
  { type: 'put_entry', collection: 'posts', id: 'a', data: [] },
  { type: 'put_entry', collection: '', id: 'a', data: {} },
  { type: 'put_entry', collection: 'posts', id: 'x'.repeat(1025), data: {} },
  { type: 'put_entry', collection: 'posts', id: 'a', data: {}, extra: 1 },
  { type: 'save_field', collection: 'posts', id: 'a', field: 'f', value: null, expectedRevision: -1 },
  { type: 'save_field', collection: 'posts', id: 'a', field: 'f', value: 1, expectedRevision: 1.5 },
  { type: 'reorder_entries', collection: 'posts', order: 'a' },
  { type: 'md_block', collection: 'posts', id: 'a', blockPath: 'b', src: '', html: '' },
  { type: 'md_edit', collection: 'posts', id: 'a', field: 'f', src: 's', before: '', after: '', marks: [{ type: 'u', start: 0, end: 1 }] },
  { type: 'md_edit', collection: 'posts', id: 'a', field: 'f', src: 's', before: '', after: '', marks: Array.from({ length: 33 }, () => ({ type: 'em', start: 0, end: 1 })) },
  { type: 'create_collection', collection: 'n', schema: {}, format: 'docx' },
  { type: 'create_collection', collection: 'n', schema: {}, metadata: { singletonId: '../x' } },
  { type: 'create_collection', collection: 'n', schema: {}, metadata: { other: 1 } },
  JSON.parse('{"type":"delete_collection","collection":"n","__proto__":{"x":1}}'),
  { collection: 'posts', ts: 1 },
  { id: 'a' },
  { retryRebuild: 'yes' },
  null,
  'put_entry'
]

t.test('the generated validators answer and report errors as ajv compiling the schemas now', async t => {
  const ajv = new Ajv({ ...COMMAND_AJV_OPTIONS })
  for (const name of Object.keys(commandSchemas) as CommandSchemaName[]) {
    const compiled = ajv.compile(commandSchemas[name])
    const generated = (commandValidatorsGenerated as Record<CommandSchemaName, ValidateFunction>)[name]
    for (const body of [...firstBodies.map(([, b]) => b), ...wrongBodies]) {
      const label = `${name} ${JSON.stringify(body)?.slice(0, 60)}`
      t.equal(generated(body), compiled(body), label)
      t.same(generated.errors ?? null, compiled.errors ?? null, `${label}: errors`)
    }
  }
})

t.test('a wrong body is a 400 naming the field, as before', async t => {
  const validators = commandValidators
  const refused: Array<[() => unknown, string]> = [
    [() => validators.mutate({ type: 'fly' }), 'Unknown command type; expected one of save_field, put_entry, delete_entry, reorder_entries, update_page_layout, md_block, md_edit, create_collection, delete_collection'],
    [() => validators.mutate({ type: 'put_entry', collection: 'posts', id: 'a' }), 'Invalid command: data is required'],
    [() => validators.mutate({ type: 'put_entry', collection: 'posts', id: 'a', data: {}, extra: 1 }), 'Invalid command: extra is not a known field'],
    [() => validators.mutate({ type: 'create_collection', collection: 'x', schema: { type: 'object' }, metadata: { folder: 'a' } }), 'Invalid command: metadata.folder is not a known field'],
    [() => validators.mutate({ type: 'reorder_entries', collection: 'posts', order: [1] }), 'Invalid command: order.0 must be string'],
    [() => validators.restore({ collection: 'posts', id: 'a', ts: -1 }), 'Invalid command: ts must be >= 0'],
    [() => validators.publish({ id: 'a' }), 'Invalid command: body must have property collection when property id is present']
  ]
  for (const [run, message] of refused) t.throws(run, new BadRequestError(message), message)
})
