#!/usr/bin/env node
// Bundles the server side of the `git-cms` executable with esbuild into dist/server/ (run by
// `npm run build`, after tsc). `bin/git-cms` imports dist/server/cli.js: one ES module and the chunks
// it imports, instead of some 800 files (ours and the packages') resolved and loaded one by one at
// every start (issue 18). What the code loads with `import()` (the Markdown renderer, koa-body,
// isomorphic-git, init, the demo ...) becomes a chunk of its own, loaded on first use.
// The library (`dist/lib/index.js`, built by tsc) stays unbundled for applications that embed it.
//
// Worker threads are started from a URL next to the module that starts them
// (`new URL(`./index-worker${ext}`, import.meta.url)`): each such worker is found here and made an
// entry point of its own, written flat next to the chunks, so the URL resolves in the bundle too.
// A `new Worker(` whose file cannot be found that way fails the build.
import { build } from 'esbuild'
import { readdirSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
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

const reservedNames = new Set(['cli', 'young-generation-cap'])
const workers = workerEntries()
for (const name of Object.keys(workers)) if (reservedNames.has(name)) throw new Error(`a worker may not be named ${name}`)

rmSync(outdir, { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'lib/cli.ts', 'young-generation-cap': 'lib/young-generation-cap.ts', ...workers },
  outdir: 'dist/server',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Packages' ES module builds first (jsonc-parser's `main` is a UMD build esbuild cannot follow).
  mainFields: ['module', 'main'],
  // The native file watcher loads its platform's binary by name at run time.
  external: ['@parcel/watcher'],
  // CommonJS packages inside an ES module bundle call require() for Node's own modules.
  banner: { js: "import { createRequire as __gitCmsCreateRequire } from 'node:module'; const require = __gitCmsCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning'
})
