/** JSON Schema helpers: validation into spec-shaped issues, a default-value template, a schema inferred from samples. */
import type { Ajv, CodeOptions, ValidateFunction, ErrorObject } from 'ajv'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import type standaloneCode from 'ajv/dist/standalone/index.js'
import { createRequire } from 'node:module'
import type { ValidationIssue } from '../errors.js'
import type { RE2JS } from 're2js'
import { DRAFT7_AJV_OPTIONS, validatorDigest } from './generated-validators.js'
import { DRAFT7_META_DIGEST, validateDraft7Schema } from './draft7-meta.generated.js'

export type JsonSchema = Record<string, unknown>
/** A schema's check: data to validation issues (empty when valid). */
export type Validator = (data: unknown) => ValidationIssue[]

/* ajv (90 modules) loads on the first compile, ajv-formats on the first schema naming a `format`. */
const requireHere = createRequire(import.meta.url)

function addFormats (ajv: Ajv | Ajv2020): void {
  (requireHere('ajv-formats') as (ajv: Ajv | Ajv2020) => void)(ajv)
}

/**
 * ajv's `code.regExp` engine (its `code` names it in standalone code, unused here): a JavaScript-syntax
 * pattern compiled with RE2 (re2js) into the `{ test }` object ajv calls, linear in the input, so a
 * pattern like `^(a|a)*$` cannot stall the service. re2js (260 KB) loads on the first pattern.
 */
export const linearRegExp: NonNullable<CodeOptions['regExp']> = Object.assign((pattern: string) => {
  let compiled: RE2JS
  try {
    const re2js = (requireHere('re2js') as { RE2JS: typeof RE2JS }).RE2JS
    compiled = re2js.compile(re2js.translateRegExp(pattern))
  } catch (err) {
    throw new Error(`pattern ${JSON.stringify(pattern)} is not supported (${(err as Error).message}); lookaround and backreferences cannot be matched in linear time`)
  }
  // ajv caches compiled patterns by toString(): it must tell patterns apart.
  return { test: (s: string) => compiled.test(s), toString: () => `/${pattern}/` }
}, { code: 'linearRegExp' })

const DRAFT7_META_ID = 'http://json-schema.org/draft-07/schema'
/** Both instances' code: patterns on RE2, `$ref`s as functions, the source kept for standalone output. */
const INSTANCE_OPTIONS = { inlineRefs: false, code: { regExp: linearRegExp, source: true } }
/* The draft-07 meta-schema's validator, made at build time so that a start does not compile it. */
const generatedMeta = validateDraft7Schema as ((schema: unknown) => boolean) & { errors?: ErrorObject[] | null }

/**
 * Compiles collection schemas, with patterns on RE2 and each `$ref` a function, never inlined (that
 * turned one 16 KB schema into 18 MB of code). The service compiles in a thread (`thread-schema-compiler.ts`).
 */
export class SchemaCompiler {
  /* Each made on its first schema: an instance adds its meta-schemas (2020-12 has eight). */
  #draft7Instance: Ajv | null = null
  #draft2020Instance: Ajv2020 | null = null
  #formats = false
  /* The meta-schema validator ajv would hold in the draft-07 instance: compiled at its first schema,
     without formats ('plain', or 'generated' when the build's validator is current) or with them. The
     instance checks schemas itself unless 'generated' or for a schema naming its `$schema`, so that
     each check is exactly ajv's own. */
  #draft7Meta: 'generated' | 'plain' | 'formats' | null = null

  /** A schema's validator as ajv standalone code (a CommonJS module); throws as `validator` does. */
  standaloneSource (schema: JsonSchema): string {
    const fn = this.#compile(schema)
    const standalone = requireHere('ajv/dist/standalone/index.js') as typeof standaloneCode
    return standalone.default(fn.is2020 ? this.#draft2020() : this.#draft7(), fn.validate)
  }

  /**
   * A schema's validator (issues, empty when valid); throws when the schema does not compile
   * (a pattern RE2 cannot run among them).
   */
  validator (schema: JsonSchema): Validator {
    return issuesOf(this.#compile(schema).validate)
  }

  #compile (schema: JsonSchema): { validate: ValidateFunction, is2020: boolean } {
    const is2020 = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12')
    const { $id: _ignored, ...withoutId } = schema
    if (!this.#formats && JSON.stringify(schema).includes('"format"')) {
      if (this.#draft7Instance !== null) {
        // ajv compiled its meta-schema validator without formats at the first schema: so here.
        if (this.#draft7Meta !== 'formats') this.#draft7Instance.getSchema(DRAFT7_META_ID)
        addFormats(this.#draft7Instance)
      }
      if (this.#draft2020Instance !== null) addFormats(this.#draft2020Instance)
      this.#formats = true
    }
    return { validate: is2020 ? this.#draft2020().compile(withoutId) : this.#compileDraft7(withoutId), is2020 }
  }

  /* As ajv.compile with validateSchema on: the schema checked against the meta-schema first (the
     same error, "schema is invalid: ..."), by the generated validator where it is ajv's own. */
  #compileDraft7 (schema: JsonSchema): ValidateFunction {
    const ajv = this.#draft7()
    this.#draft7Meta ??= this.#formats ? 'formats' : DRAFT7_META_DIGEST === validatorDigest(DRAFT7_META_ID, DRAFT7_AJV_OPTIONS) ? 'generated' : 'plain'
    const generated = this.#draft7Meta === 'generated' && schema.$schema === undefined
    if (!generated) ajv.validateSchema(schema, true)
    else if (!generatedMeta(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(generatedMeta.errors)}`)
    return ajv.compile(schema)
  }

  #draft7 (): Ajv {
    // Schemas are checked against the meta-schema by #compileDraft7.
    this.#draft7Instance ??= this.#withFormats(new (requireHere('ajv') as typeof import('ajv')).Ajv({ ...DRAFT7_AJV_OPTIONS, validateSchema: false, ...INSTANCE_OPTIONS }))
    return this.#draft7Instance
  }

  #draft2020 (): Ajv2020 {
    this.#draft2020Instance ??= this.#withFormats(new (requireHere('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020({ allErrors: true, strict: false, ...INSTANCE_OPTIONS }))
    return this.#draft2020Instance
  }

  #withFormats<A extends Ajv | Ajv2020> (ajv: A): A {
    if (this.#formats) addFormats(ajv)
    return ajv
  }
}

/**
 * The issues-returning form of an ajv validator.
 * @returns a function from data to validation issues (empty when valid)
 */
export function issuesOf (fn: (data: unknown) => boolean): Validator {
  const check = fn as ValidateFunction
  return (data) => check(data) ? [] : (check.errors ?? []).map(err => ({ path: errorPath(err), code: err.keyword, message: err.message ?? 'is invalid' }))
}

/**
 * The dotted path an ajv error is about: its instance path (JSON Pointer, unescaped), then the missing or unknown property.
 * @param err one of a validator's errors
 * @returns the path; '' for the data itself
 */
export function errorPath (err: ErrorObject): string {
  const segments = err.instancePath.split('/').slice(1).map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (err.keyword === 'required') segments.push((err.params as { missingProperty: string }).missingProperty)
  if (err.keyword === 'additionalProperties') segments.push((err.params as { additionalProperty: string }).additionalProperty)
  return segments.join('.')
}

/** Builds the default value of a schema: `default` when given, else an empty value of its type. */
export function templateOf (schema: JsonSchema): unknown {
  if ('default' in schema) return structuredClone(schema.default)
  if ('const' in schema) return structuredClone(schema.const)
  const type = Array.isArray(schema.type) ? schema.type.find(t => t !== 'null') : schema.type
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>
      for (const [key, sub] of Object.entries(props)) out[key] = templateOf(sub)
      return out
    }
    case 'array': return []
    case 'string': return Array.isArray(schema.enum) && schema.enum.length > 0 ? schema.enum[0] : ''
    case 'number': case 'integer': return 0
    case 'boolean': return false
    default: return null
  }
}

/**
 * Infers a permissive schema from sample entries: the union of their top-level fields and types,
 * plus `body` (a string) for Markdown entries.
 */
export function inferSchema (samples: Array<Record<string, unknown>>, markdown: boolean): JsonSchema {
  const types = new Map<string, Set<string>>()
  for (const sample of samples) {
    for (const [key, value] of Object.entries(sample)) {
      const set = types.get(key) ?? new Set<string>()
      set.add(jsonType(value))
      types.set(key, set)
    }
  }
  const properties: Record<string, JsonSchema> = {}
  for (const [key, set] of [...types].sort(([a], [b]) => a.localeCompare(b))) {
    const list = [...set]
    properties[key] = list.length === 1 ? { type: list[0] } : { type: list }
  }
  if (markdown) properties.body = { type: 'string' }
  return { type: 'object', properties }
}

function jsonType (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (Number.isInteger(value)) return 'integer'
  return typeof value === 'number' ? 'number' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'boolean' : 'object'
}
