// Work some packages do at every import of the server bundle, done once by scripts/build-server.mjs
// instead (issue 18: a restart's module evaluation, on the way to the first list).
// - `mime-types` (koa's, and the older copies other packages carry) fills its extension and type
//   maps at import by scoring every type of mime-db against the others (~10 ms of the main thread at
//   every start): the maps are built here by the package itself and written into its source as
//   JSON, so that the same values are there at once.
// - mime-db's 190 KB `db.json` becomes a `JSON.parse` of its text instead of an object literal
//   (V8 parses JSON faster than the same object written as JavaScript).
// A package whose source no longer has the expected line fails the build (test/cli-bundle-packages
// checks the result against the package's own).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** The call of mime-types' index.js that fills its maps at import. */
const POPULATE = 'populateMaps(exports.extensions, exports.types)\n'

/**
 * mime-types' index.js with its maps filled from JSON (the maps the package builds itself).
 * @param file the package's index.js
 * @param text its source
 * @returns the source to bundle
 */
export function mimeTypesWithMaps (file, text) {
  if (text.split(POPULATE).length !== 2) throw new Error(`${file}: expected one "${POPULATE.trim()}" line (update scripts/package-start-work.mjs)`)
  const built = createRequire(file)(file)
  const maps = JSON.stringify({ extensions: built.extensions, types: built.types, conflicts: built._extensionConflicts ?? [] })
  const fill = `;(function (maps) { Object.assign(exports.extensions, maps.extensions); Object.assign(exports.types, maps.types); if (Array.isArray(exports._extensionConflicts)) exports._extensionConflicts.push(...maps.conflicts) })(JSON.parse(${JSON.stringify(maps)}))\n`
  return text.replace(POPULATE, fill)
}

/**
 * A JSON file as a CommonJS module that parses its text.
 * @param text the JSON text
 * @returns the module's source
 */
export function jsonAsParse (text) {
  JSON.parse(text)
  return `module.exports = JSON.parse(${JSON.stringify(text)})\n`
}

/** The esbuild plugin. */
export const packageStartWork = {
  name: 'package-start-work',
  setup (b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]mime-types[\\/]index\.js$/ }, args => ({ contents: mimeTypesWithMaps(args.path, readFileSync(args.path, 'utf8')), loader: 'js' }))
    b.onLoad({ filter: /[\\/]node_modules[\\/]mime-db[\\/]db\.json$/ }, args => ({ contents: jsonAsParse(readFileSync(args.path, 'utf8')), loader: 'js' }))
  }
}
