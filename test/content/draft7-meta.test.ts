import t from 'tap'
import { createRequire } from 'node:module'
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { SchemaCompiler, linearRegExp, type JsonSchema } from '../../lib/content/schema-tools.js'
import { DRAFT7_AJV_OPTIONS, validatorDigest } from '../../lib/content/generated-validators.js'
import { DRAFT7_META_DIGEST } from '../../lib/content/draft7-meta.generated.js'

const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv | Ajv2020) => void

/** What SchemaCompiler did before the generated meta-schema validator: ajv checking each schema itself. */
class Reference {
  #d7: Ajv | null = null
  #d20: Ajv2020 | null = null
  #formats = false
  compile (schema: JsonSchema): string {
    const text = JSON.stringify(schema)
    const { $id: _ignored, ...withoutId } = schema
    if (!this.#formats && text.includes('"format"')) {
      this.#formats = true
      if (this.#d7 !== null) addFormats(this.#d7)
      if (this.#d20 !== null) addFormats(this.#d20)
    }
    const is2020 = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12')
    try {
      if (is2020) {
        if (this.#d20 === null) { this.#d20 = new Ajv2020({ allErrors: true, strict: false, code: { regExp: linearRegExp } }); if (this.#formats) addFormats(this.#d20) }
        this.#d20.compile(withoutId)
      } else {
        if (this.#d7 === null) { this.#d7 = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } }); if (this.#formats) addFormats(this.#d7) }
        this.#d7.compile(withoutId)
      }
      return 'ok'
    } catch (err) {
      return `${(err as Error).name}: ${(err as Error).message}`
    }
  }
}

const answer = (compiler: SchemaCompiler, schema: JsonSchema): string => {
  try { compiler.validator(schema); return 'ok' } catch (err) { return `${(err as Error).name}: ${(err as Error).message}` }
}

const schemas: JsonSchema[] = [
  { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string' } } } },
  { type: 'nope' },
  { type: 'object', properties: { a: { type: 'strin' }, b: { minLength: -1 }, c: { required: 'x' } } },
  { properties: 3 },
  { items: [1] },
  { enum: 'x' },
  { $ref: 3 },
  { pattern: 5 },
  { type: 'string', pattern: '((' },
  { type: 'string', pattern: '(a)\\1' },
  { type: 'string', format: 'email' },
  { type: 'string', format: 3 },
  { $id: 'http://x.test/s', type: 'nope' },
  { $schema: 'http://json-schema.org/draft-07/schema#', type: 'nope' },
  { $schema: 'http://json-schema.org/draft-07/schema', type: 'string' },
  { $schema: 'http://json-schema.org/draft-06/schema#', type: 'string' },
  { $schema: 3, type: 'string' },
  { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'nope' },
  { $schema: 'https://json-schema.org/draft/2020-12/schema', prefixItems: [{ type: 'string' }] },
  JSON.parse('{"type": "object", "properties": {"__proto__": {"type": "nope"}}}') as JsonSchema,
  JSON.parse('{"__proto__": {"type": "nope"}, "type": "string"}') as JsonSchema,
  { definitions: { a: { type: 'nope' } }, $ref: '#/definitions/a' },
  { dependencies: { a: 3 } },
  { additionalProperties: 'no' }
]

t.test('the generated draft-07 meta-schema validator is the one used (made from this ajv and options)', async t => {
  t.equal(DRAFT7_META_DIGEST, validatorDigest('http://json-schema.org/draft-07/schema', DRAFT7_AJV_OPTIONS))
})

t.test('each schema alone: the same answer and error as ajv checking it against its meta-schema', async t => {
  let refused = 0
  for (const schema of schemas) {
    const expected = new Reference().compile(schema)
    if (expected !== 'ok') refused++
    t.equal(answer(new SchemaCompiler(), schema), expected, JSON.stringify(schema))
  }
  t.ok(refused >= 14, `most are refused (${refused})`)
})

t.test('in sequence on one compiler (formats added after the first schema, and before it): the same answers', async t => {
  const withFormatFirst = [schemas[10]!, ...schemas]
  for (const sequence of [schemas, withFormatFirst, [...schemas].reverse()]) {
    const reference = new Reference()
    const compiler = new SchemaCompiler()
    for (const schema of sequence) {
      // Fresh objects each time: the compilers' caches by object and text are not what is compared.
      const copy = structuredClone(schema)
      t.equal(answer(compiler, copy), reference.compile(structuredClone(schema)), JSON.stringify(schema))
    }
  }
})
