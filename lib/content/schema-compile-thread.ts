/** The worker thread of `ThreadSchemaCompiler`: a schema in, its validator's code and V8's code cache out. */
import { parentPort } from 'node:worker_threads'
import { SchemaCompiler, type JsonSchema } from './schema-tools.js'
import type { PoolReply, PoolRequest } from './worker-pool.js'
import { validatorCodeCache, validatorScript, type CompiledValidator } from './thread-schema-compiler.js'

const compiler = new SchemaCompiler()

parentPort?.on('message', (request: PoolRequest<JsonSchema>) => {
  if ('leave' in request) { parentPort?.close(); return }
  const { id, job } = request
  let message: PoolReply<CompiledValidator>
  try {
    const script = validatorScript(compiler.standaloneSource(job))
    message = { id, reply: { script, cache: validatorCodeCache(script) } }
  } catch (err) {
    message = { id, error: err instanceof Error ? err.message : String(err) }
  }
  parentPort?.postMessage(message)
})
parentPort?.postMessage({ ready: true } satisfies PoolReply<CompiledValidator>)
