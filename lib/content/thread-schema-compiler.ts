/**
 * Collection schemas compiled off the event loop (the largest allowed held it up to 1.4 s): a thread hands
 * back code plus V8's code cache, which loads here in 3-29 ms. A compile over the time limit ends the thread.
 */
import { createRequire } from 'node:module'
import vm from 'node:vm'
import { WorkerPool } from './worker-pool.js'
import { issuesOf, linearRegExp, type JsonSchema, type Validator } from './schema-tools.js'

/** Milliseconds one schema may take to compile (the largest allowed takes 1.4 s on 2 cores at a load of 24). */
const SCHEMA_COMPILE_TIME_LIMIT_MS = 10_000
/** Longest validator module accepted from the thread: the largest schema allowed makes 160 KB. */
const MAX_VALIDATOR_SOURCE_CHARS = 2_000_000
const WORKER_HEAP_MB = 256
/** An idle schema thread leaves after this long (the next compile starts another). */
const SCHEMA_THREAD_IDLE_MS = 2000

/** A schema that does not compile: `tooCostly` when over the time, memory or code limit. */
export class SchemaCompileError extends Error {
  constructor (message: string, readonly tooCostly: boolean) {
    super(message)
    this.name = 'SchemaCompileError'
  }
}

const requireFromHere = createRequire(import.meta.url)
/** The modules ajv's standalone code requires: its runtime helpers and ajv-formats' formats. */
function requireRuntime (id: string): unknown {
  if (!id.startsWith('ajv/dist/runtime/') && id !== 'ajv-formats/dist/formats') throw new Error(`validator module requires ${id}`)
  return requireFromHere(id)
}

/** A validator's code, compiled: what the thread hands over. */
export interface CompiledValidator {
  /** A script evaluating to a function of (module, exports, require, linearRegExp). */
  script: string
  /** V8's code cache of the script, made after every function in it was compiled. */
  cache: Uint8Array
}

type ModuleFunction = (module: { exports: unknown }, exports: unknown, require: (id: string) => unknown, regExp: unknown) => Array<((data: unknown) => unknown) | null>

/** Evaluates a validator script (with its code cache when given). */
export function runValidatorScript (script: string, cache?: Uint8Array): { validate: (data: unknown) => boolean, functions: Array<(data: unknown) => unknown>, compiled: vm.Script } {
  const compiled = new vm.Script(script, { filename: 'collection-schema-validator.js', ...(cache !== undefined ? { cachedData: Buffer.from(cache.buffer, cache.byteOffset, cache.byteLength) } : {}) })
  const module: { exports: unknown } = { exports: {} }
  // The code is ajv's, generated from the schema with every schema string quoted by ajv.
  const functions = (compiled.runInThisContext() as ModuleFunction)(module, module.exports, requireRuntime, linearRegExp)
  return { validate: module.exports as (data: unknown) => boolean, functions: functions.filter(f => f !== null), compiled }
}

/** Compiles schemas in a worker thread, once each; one instance per service. */
export class ThreadSchemaCompiler extends WorkerPool<JsonSchema, CompiledValidator> {
  /** Validators' code by schema text: many collections sharing one schema compile it once. */
  readonly #code = new Map<string, Promise<CompiledValidator>>()
  /** Validators by schema text, each loaded here on its first use. */
  readonly #validators = new Map<string, Promise<Validator>>()

  constructor (opts: { idleMs?: number } = {}) {
    super({
      file: new URL('./schema-compile-thread', import.meta.url),
      size: 1,
      timeLimitMs: SCHEMA_COMPILE_TIME_LIMIT_MS,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      failure: (why, detail) => new SchemaCompileError(`the schema cannot be compiled: ${detail}`, why !== 'closing'),
      // Compiles are rare: an idle thread kept 5 MB of RSS for nothing.
      idleMs: opts.idleMs ?? SCHEMA_THREAD_IDLE_MS
    })
  }

  /**
   * Compiles a schema in the thread, without loading its validator here (the config's schemas at start).
   * @returns resolves when it compiled; rejects with SchemaCompileError when it does not
   */
  async check (schema: JsonSchema): Promise<void> {
    await this.#compiled(JSON.stringify(schema), schema)
  }

  /**
   * The validator of a schema, compiled in the thread on first use.
   * @returns its validator; rejects with SchemaCompileError when the schema does not compile
   */
  async validator (schema: JsonSchema): Promise<Validator> {
    const text = JSON.stringify(schema)
    return await once(this.#validators, text, async () => {
      const compiled = await this.#compiled(text, schema)
      return issuesOf(runValidatorScript(compiled.script, compiled.cache).validate)
    })
  }

  async #compiled (text: string, schema: JsonSchema): Promise<CompiledValidator> {
    return await once(this.#code, text, async () => {
      const compiled = await this.run(schema).catch((err: Error) => {
        throw err instanceof SchemaCompileError ? err : new SchemaCompileError(err.message, false)
      })
      if (compiled.script.length > MAX_VALIDATOR_SOURCE_CHARS) {
        throw new SchemaCompileError(`the schema compiles to more than ${MAX_VALIDATOR_SOURCE_CHARS} characters of code`, true)
      }
      return compiled
    })
  }
}

/** The promise a map keeps for a key, made on first use; a failure is not kept, so the next use tries again. */
async function once<T> (map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let pending = map.get(key)
  if (pending === undefined) {
    pending = make()
    map.set(key, pending)
    pending.catch(() => { if (map.get(key) === pending) map.delete(key) })
  }
  return await pending
}
