import t from 'tap'
import { SchemaCompileError, ThreadSchemaCompiler } from '../../lib/content/thread-schema-compiler.js'

/** Waits (turns of the event loop, never a fixed time) until `done` holds; fails after 20 s. */
async function until (done: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 20_000
  while (!done()) {
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return true
}

t.test('the schema thread compiles, refuses a schema that does not compile, and leaves when idle', async t => {
  const compiler = new ThreadSchemaCompiler({ idleMs: 50 })
  t.teardown(async () => { await compiler.close() })
  const titled = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } }
  await compiler.check(titled)
  t.equal(compiler.threads, 1, 'a thread compiled it')
  const err = await compiler.check({ type: 'object', properties: { v: { type: 'string', pattern: 'a(?!b)' } } }).then(() => null, (e: unknown) => e)
  t.ok(err instanceof SchemaCompileError, 'a pattern the engine cannot run is refused')
  t.ok(await until(() => compiler.threads === 0), 'the idle thread left')
  // Loaded here from the code compiled before: no thread needed.
  t.same((await compiler.validator(titled))({}), [{ path: 'title', code: 'required', message: "must have required property 'title'" }])
  t.equal(compiler.threads, 0)
  // Another schema starts another thread.
  const ranked = { type: 'object', properties: { rank: { type: 'integer' } } }
  t.same((await compiler.validator(ranked))({ rank: 'first' }).map(i => i.path), ['rank'])
  t.equal(compiler.threads, 1)
})
