/** The worker thread of `ThreadSchemaCompiler`: a schema in, its validator's code and V8's code cache out. */
import { SchemaCompiler, type JsonSchema } from './schema-tools.js'
import { serveJobs } from './worker-pool.js'
import { validatorCodeCache, validatorScript, type CompiledValidator } from './thread-schema-compiler.js'

const compiler = new SchemaCompiler()

serveJobs<JsonSchema, CompiledValidator>(schema => {
  const script = validatorScript(compiler.standaloneSource(schema))
  return { script, cache: validatorCodeCache(script) }
})
