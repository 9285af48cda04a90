/**
 * Alignment in the browser (issue 29: a 20 KB body <= 20 ms): the in-place editor's own module
 * (aligned-edit.ts, bundled by esbuild as the build does) pairs, in Chromium, a generator-like
 * rendering of the body (markdown-it, as Eleventy's) with the body's source blocks, and marks them.
 */
import { build } from 'esbuild'
import MarkdownIt from 'markdown-it'
import { chromium } from 'playwright-core'
import { parseOutline } from '../lib/content/markdown/markdown-it-outline.js'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const MODULE = 'lib/browser/editor/aligned-edit.ts'

/** The repository's root, from bench/ (ts-node) or dist/bench/ (built). */
function repoRoot (): string {
  const root = ['../', '../../'].map(rel => fileURLToPath(new URL(rel, import.meta.url))).find(dir => existsSync(dir + MODULE))
  if (root === undefined) throw new Error(`${MODULE} not found`)
  return root
}

/** What one alignment of the body gave, over `runs` runs in a fresh page each. */
export interface AlignmentFigures { ms: number[], blocks: number, editable: number }

/**
 * Aligns the body's rendering with its source blocks in Chromium.
 * @param body the Markdown body
 * @param runs how many times (a fresh copy of the rendering each time)
 * @returns the time of each run and the counts of the last
 */
export async function alignInChromium (body: string, runs: number): Promise<AlignmentFigures> {
  const bundle = await build({
    stdin: { contents: `import { markAligned } from './${MODULE}'\n(globalThis as any).markAligned = markAligned\n`, loader: 'ts', resolveDir: repoRoot() },
    bundle: true, write: false, format: 'iife', target: ['es2020'], logLevel: 'silent'
  })
  const script = bundle.outputFiles[0]?.text ?? ''
  const html = new MarkdownIt({ html: true, typographer: true }).render(body)
  const source = parseOutline(body).blocks
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'] })
  try {
    const page = await browser.newPage()
    await page.setContent(`<!doctype html><html><body><main id="tpl"><h1>Template title</h1><div data-cms-md="posts/x#body">${html}</div></main></body></html>`)
    await page.addScriptTag({ content: script })
    return await page.evaluate(({ source, runs }) => {
      // This runs in the page (the bench is type-checked without the DOM's types).
      const original = (globalThis as any).document.querySelector('[data-cms-md]')
      const ms: number[] = []
      let last = { blocks: 0, editable: 0 }
      for (let i = 0; i < runs; i++) {
        const copy = original.cloneNode(true)
        original.after(copy)
        const started = performance.now()
        last = (globalThis as any).markAligned(copy, source, false, () => false)
        ms.push(performance.now() - started)
        copy.remove()
      }
      return { ms, blocks: last.blocks, editable: last.editable }
    }, { source, runs })
  } finally {
    await browser.close()
  }
}
