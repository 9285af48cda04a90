#!/usr/bin/env node
// Bundles the server side of the `git-cms` executable with esbuild into dist/server/ (run by
// `npm run build`, after tsc). `bin/git-cms` runs dist/server/server.cjs: the whole server in one
// CommonJS file (lib/cli.ts and what it imports, the packages included), instead of some 800 files
// (ours and the packages') resolved and loaded one by one at every start (issue 18). What the code
// loads with `import()` (the Markdown renderer, koa-body, isomorphic-git, init, the demo ...) is in
// the same file but runs only on first use. CommonJS, because only a script can be compiled with a
// V8 code cache on Node 20 (`vm.Script` `cachedData`; ES modules cannot without a flag): bin/git-cms
// keeps one next to the bundle (README "What bin/git-cms runs").
// The library (`dist/lib/index.js`, built by tsc) stays unbundled for applications that embed it.
//
// Worker threads are started from a URL next to the module that starts them
// (`new URL(`./index-worker${ext}`, import.meta.url)`): each such worker is found here and made an
// ES module entry point of its own (with shared chunks), written flat in dist/server/, and the server
// bundle's `import.meta.url` is that of a module in the same folder, so the URL resolves in the
// bundle too. A `new Worker(` whose file cannot be found that way fails the build.
import { build } from 'esbuild'
import { readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { packageStartWork } from './package-start-work.mjs'
import path from 'node:path'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outdir = path.join(root, 'dist', 'server')

/** Every .ts file under a directory (browser code excluded: it has its own bundles). */
function sources (dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap(d => {
    const full = path.join(dir, d.name)
    if (d.isDirectory()) return d.name === 'browser' ? [] : sources(full)
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [full] : []
  })
}

/**
 * The worker modules lib/ starts: `new URL(`./NAME${...}`, import.meta.url)` in a file that uses
 * `new Worker(` or `startWorker(` (young-generation-cap.ts, which starts the file its caller names,
 * is the one exception).
 */
function workerEntries () {
  const workers = {}
  for (const file of sources(path.join(root, 'lib'))) {
    const text = readFileSync(file, 'utf8')
    if (path.relative(root, file) === path.join('lib', 'young-generation-cap.ts')) continue
    if (!text.includes('new Worker(') && !text.includes('startWorker(')) continue
    const names = [...text.matchAll(/new URL\(`\.\/([\w-]+)\$\{[^`]*\}`,\s*import\.meta\.url\)/g)].map(m => m[1])
    if (names.length === 0) throw new Error(`${path.relative(root, file)} starts a worker from a file this build cannot find (expected new URL(\`./name\${ext}\`, import.meta.url))`)
    for (const name of names) {
      const source = path.join(path.dirname(file), `${name}.ts`)
      if (!existsSync(source)) throw new Error(`${path.relative(root, file)} starts worker ./${name}, but ${path.relative(root, source)} does not exist`)
      if (workers[name] !== undefined && workers[name] !== source) throw new Error(`two workers are named ${name}: ${workers[name]} and ${source}`)
      workers[name] = path.relative(root, source)
    }
  }
  return workers
}

const reservedNames = new Set(['cli', 'server'])
const workers = workerEntries()
for (const name of Object.keys(workers)) if (reservedNames.has(name)) throw new Error(`a worker may not be named ${name}`)

rmSync(outdir, { recursive: true, force: true })
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Packages' ES module builds first (jsonc-parser's `main` is a UMD build esbuild cannot follow).
  mainFields: ['module', 'main'],
  sourcemap: 'linked',
  logLevel: 'warning'
}
// The workers: ES modules sharing chunks.
await build({
  ...common,
  entryPoints: workers,
  outdir: 'dist/server',
  chunkNames: 'chunk-[hash]',
  splitting: true,
  format: 'esm',
  // CommonJS packages inside an ES module bundle call require() for Node's own modules.
  banner: { js: "import { createRequire as __gitCmsCreateRequire } from 'node:module'; const require = __gitCmsCreateRequire(import.meta.url);" }
})
// The server: one script. Strict throughout, as the ES modules it is made of (and as the ES module
// bundle was). `import.meta.url` is a module's in dist/server/ with a `.js` name: workers
// (`./stat-worker.js`), the browser bundles (`../../dist/browser/`) and `fixtures-repo/` resolve as
// they did from a chunk there.
const serverFile = path.join(outdir, 'server.cjs')
// An `await import()` of a module named at run time (a site's cms.config.mjs) becomes `__gitCmsImport(`,
// which bin/git-cms passes in (an import() compiled in a vm.Script is experimental on Node 20).
const importOutside = {
  name: 'import-outside',
  setup (b) {
    b.onLoad({ filter: /[\\/]lib[\\/].*\.ts$/ }, args => {
      const text = readFileSync(args.path, 'utf8')
      // `await import(` only: the worker preludes in young-generation-cap.ts are strings holding an
      // `import(` that runs in the worker.
      if (!/\bawait import\((?![`'"])/.test(text)) return undefined
      return { contents: text.replace(/\bawait import\((?![`'"])/g, 'await __gitCmsImport('), loader: 'ts' }
    })
  }
}
await build({
  ...common,
  plugins: [importOutside, packageStartWork],
  stdin: {
    contents: "export { main } from './lib/cli.ts'\nexport { capYoungGeneration, withStartFlags } from './lib/young-generation-cap.ts'\n",
    resolveDir: root,
    sourcefile: 'server-entry.ts',
    loader: 'ts'
  },
  outfile: serverFile,
  format: 'cjs',
  // A native addon: loaded from node_modules (its `bindings` lookup cannot run from a bundle).
  external: ['better-sqlite3'],
  // Without comments (some are not ASCII, which made the source a two-byte string: twice the
  // memory, and 23 ms instead of 8 to read) and indentation: 6.5 -> 4.3 MB read at every start.
  minifyWhitespace: true,
  // The packages' licence comments go to server.cjs.LEGAL.txt (some of them are not ASCII either).
  legalComments: 'external',
  charset: 'ascii',
  define: { 'import.meta.url': '__gitCmsModuleUrl' },
  banner: { js: "'use strict'; const __gitCmsModuleUrl = require('node:url').pathToFileURL(require('node:path').join(__dirname, 'server.js')).href;" }
})
// The bundle's content hash, last line: the code cache is keyed by it (V8 itself checks only the
// source's length).
// ASCII throughout, so that the source is a one-byte string (half the memory, 8 ms to read against
// 23): esbuild's `charset: 'ascii'` leaves a few regular expression literals with characters past
// U+00FF as they are; the same character written `\uXXXX` means the same there.
// It is written as one function expression (a CommonJS module's wrapper, with one more parameter,
// below), which bin/git-cms reads as Latin-1: Node makes a string that large an external one (off
// V8's heap; read as UTF-8 and then wrapped, it was 4.3 MB in the young generation's large object
// space at every start, which made the young generation grow to its cap before the first list).
const text = readFileSync(serverFile, 'utf8').replace(/[^\x00-\x7f]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
const wrapped = `(function (exports, require, module, __filename, __dirname, __gitCmsImport) {${text}\n});`
writeFileSync(serverFile, `${wrapped}\n//# gitCmsBundleHash=${createHash('sha256').update(wrapped).digest('hex')}\n`)
