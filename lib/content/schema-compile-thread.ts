/** The worker thread of `ThreadSchemaCompiler`: a schema in, its validator's code and V8's code cache out. */
import { SchemaCompiler, type JsonSchema } from './schema-tools.js'
import { serveJobs } from './worker-pool.js'
import { runValidatorScript, type CompiledValidator } from './thread-schema-compiler.js'

const compiler = new SchemaCompiler()

serveJobs<JsonSchema, CompiledValidator>(schema => {
  const source = compiler.standaloneSource(schema)
  // The script also returns every validate function, to call each once: V8 compiles a function on
  // its first call, and the code cache holds only compiled functions.
  const names = [...new Set(source.match(/\bfunction validate\d+\(/g) ?? [])].map(m => m.slice('function '.length, -1))
  // A name found inside a schema string is not defined: typeof keeps it from throwing.
  const defined = names.map(n => `typeof ${n} === 'function' ? ${n} : null`).join(', ')
  const script = `(function (module, exports, require, linearRegExp) {${source}\nreturn [${defined}]\n})`
  const { functions, compiled } = runValidatorScript(script)
  for (const fn of functions) {
    try { fn({}) } catch {}
  }
  return { script, cache: compiled.createCachedData() }
})
