/**
 * What bounded rendering costs an ordinary body: `GET /render` renders in a worker thread
 * (lib/commands/bounded-render.ts) where it rendered in the request's own thread. Both paths are
 * timed on the same 20 KB body, interleaved so that the machine's load weighs on both alike; the
 * issue's target is the bounded p50 within 10% of the plain one.
 */
import { performance } from 'node:perf_hooks'
import { BoundedRenderer } from '../lib/commands/bounded-render.js'
import { renderMarkdown } from '../lib/content/markdown/render.js'
import type { SectionReport } from './report.js'

/** The bounded path's p50 over the plain one's, at most (the issue: unchanged within 10%). */
const MAX_RATIO = 1.1
const WARM_UP = 5

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/**
 * Times the plain render and the bounded render of one body and reports both p50s and their ratio.
 * @param report where the figures go
 * @param body an ordinary Markdown body (about 20 KB)
 * @param runs runs per path
 * @param load the machine's load, for the row names
 */
export async function boundedRenderFigures (report: SectionReport, body: string, runs: number, load: () => string): Promise<void> {
  const opts = { collection: 'posts', id: 'bench' }
  const renderer = new BoundedRenderer()
  try {
    const plain: number[] = []
    const bounded: number[] = []
    for (let i = 0; i < WARM_UP + runs; i++) {
      let started = performance.now()
      const html = renderMarkdown(body, opts)
      const plainMs = performance.now() - started
      started = performance.now()
      const boundedHtml = await renderer.render(body, opts)
      const boundedMs = performance.now() - started
      if (boundedHtml !== html) throw new Error('the bounded render differs from the plain render')
      if (i >= WARM_UP) { plain.push(plainMs); bounded.push(boundedMs) }
    }
    const kb = Math.round(body.length / 1024)
    report.info(`${kb} KB body: render in the request's thread (plain), p50 ${load()}`, median(plain), 'ms')
    report.info(`${kb} KB body: render in a worker thread (bounded), p50 ${load()}`, median(bounded), 'ms')
    report.atMost(`${kb} KB body: bounded render p50 / plain render p50`, median(bounded) / median(plain), 'x', MAX_RATIO)
  } finally {
    await renderer.close()
  }
}
