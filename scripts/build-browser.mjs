#!/usr/bin/env node
// Bundles the Studio and the inline editor with esbuild into dist/browser/ (run by `npm run build`).
// Entry points are fixed here; each one is optional so the build works while a part is being written.
import { build } from 'esbuild'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const entries = [
  { in: 'lib/browser/editor/bootstrap.ts', out: 'bootstrap' },
  { in: 'lib/browser/editor/editor.ts', out: 'editor' },
  { in: 'lib/browser/editor/editor.css', out: 'editor' },
  { in: 'lib/browser/studio/main.tsx', out: 'studio' },
  { in: 'lib/browser/studio/studio.css', out: 'studio' }
].filter(e => existsSync(path.join(root, e.in)))

if (entries.length > 0) {
  await build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: 'dist/browser',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning'
  })
}
