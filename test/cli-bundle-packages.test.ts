import t from 'tap'
import { readFileSync } from 'node:fs'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/* scripts/package-start-work.mjs does at build time what some packages did at every start of the
   server bundle (issue 18): mime-types' maps are built by the package itself and written into its
   source as JSON, mime-db's db.json becomes a JSON.parse. The result must be the package's own. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const { mimeTypesWithMaps, jsonAsParse } = await import(pathToFileURL(path.join(ROOT, 'scripts', 'package-start-work.mjs')).href) as {
  mimeTypesWithMaps: (file: string, text: string) => string
  jsonAsParse: (text: string) => string
}

interface MimeTypes {
  types: Record<string, string>
  extensions: Record<string, string[]>
  _extensionConflicts?: unknown[]
  lookup: (p: string) => string | false
  contentType: (t: string) => string | false
  charset: (t: string) => string | false
  extension: (t: string) => string | false
}

/** Runs a CommonJS source as the module at `file` (its own requires resolve from there). */
function runAs (file: string, source: string): unknown {
  const m = new Module(file) as Module & { _compile: (code: string, file: string) => void, paths: string[] }
  m.filename = file
  m.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(path.dirname(file))
  m._compile(source, file)
  return m.exports
}

// Every copy the server bundle holds: koa's (through type-is), accepts' and co-body's.
const rootRequire = createRequire(path.join(ROOT, 'package.json'))
const copies = new Set<string>([rootRequire.resolve('mime-types')])
for (const owner of ['accepts', 'co-body']) {
  try { copies.add(createRequire(rootRequire.resolve(owner)).resolve('mime-types')) } catch {}
}

for (const file of copies) {
  t.test(`mime-types with its maps written at build time: ${path.relative(ROOT, file)}`, async t => {
    const text = readFileSync(file, 'utf8')
    const built = mimeTypesWithMaps(file, text)
    t.notMatch(built, /^populateMaps\(exports\.extensions, exports\.types\)$/m, 'the maps are no longer built at import')
    const own = createRequire(file)(file) as MimeTypes
    const ours = runAs(file, built) as MimeTypes
    t.same(Object.keys(ours.types), Object.keys(own.types), 'the same extensions, in the same order')
    t.same(ours.types, own.types, 'extension -> type')
    t.same(ours.extensions, own.extensions, 'type -> extensions')
    t.same(ours._extensionConflicts, own._extensionConflicts, 'the recorded conflicts')
    for (const name of ['x.json', 'a/b.html', 'c.MP4', 'd.webp', 'e.svg', 'f.unknownext', 'g', 'h.ts', 'i.wasm']) t.equal(ours.lookup(name), own.lookup(name), `lookup ${name}`)
    for (const type of ['json', 'html', 'text/markdown', 'application/json', 'image/png', 'nope/nope']) {
      t.equal(ours.contentType(type), own.contentType(type), `contentType ${type}`)
      t.equal(ours.charset(type), own.charset(type), `charset ${type}`)
      t.equal(ours.extension(type), own.extension(type), `extension ${type}`)
    }
    t.throws(() => mimeTypesWithMaps(file, text.replace('populateMaps(exports.extensions, exports.types)\n', '')), /expected one/, 'a source without the line fails the build')
  })
}

t.test('mime-db as JSON.parse: the same object; bad JSON fails the build', async t => {
  const file = rootRequire.resolve('mime-db/db.json')
  const text = readFileSync(file, 'utf8')
  t.same(runAs(file.replace(/\.json$/, '.js'), jsonAsParse(text)), JSON.parse(text))
  t.throws(() => jsonAsParse('{"a": '))
})

t.test('the server bundle was built with them', async t => {
  const bundle = readFileSync(path.join(ROOT, 'dist', 'server', 'server.cjs'), 'latin1')
  t.notMatch(bundle, /populateMaps\(exports\d*\.extensions,\s*exports\d*\.types\)/, 'no copy of mime-types builds its maps at import')
  t.match(bundle, /Object\.assign\(exports\d*\.extensions,maps\.extensions\)/, 'the maps are filled from JSON')
})
