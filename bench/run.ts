/**
 * `npm run bench`: generates site repositories, drives the real server over HTTP and prints one
 * table per section (figure, value, target, OK/MISS) and a summary line. Benches only print; they
 * never fail a test run.
 *
 *   node dist/bench/run.js [reads|writes|drafts|remote|markdown|render|search|scale ...]
 *   BENCH_ENTRIES=1000 BENCH_CONCURRENCY=8 node dist/bench/run.js
 *   BENCH_DIR=/some/dir: where the generated sites go (default: the system temp directory)
 *   BENCH_SCALE_ENTRIES=20000: the larger entry count of the search and scale sections (default 100,000)
 */
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { BenchContext } from './bench-context.js'
import { draftsBench } from './drafts-bench.js'
import { markdownSection, NotAvailableError } from './markdown-section.js'
import { bundledReadsBench, readsBench } from './reads-bench.js'
import { renderBench } from './render-bench.js'
import { searchBench } from './search-bench.js'
import { scaleBench } from './scale-bench.js'
import { remoteBench } from './remote-bench.js'
import { SectionReport, formatSection, formatSummary, type SectionResult } from './report.js'
import { writesBench } from './writes-bench.js'

interface Section {
  name: string
  title: (ctx: BenchContext) => string
  run: (ctx: BenchContext, report: SectionReport) => Promise<void>
}

const SECTIONS: Section[] = [
  { name: 'reads', title: ctx => `reads (issue 3): ${ctx.entries} Markdown entries`, run: readsBench },
  { name: 'bundles', title: ctx => `reads in a nested, bundled layout (issue 14): ${ctx.entries} page bundles in year folders`, run: bundledReadsBench },
  { name: 'writes', title: ctx => `writes (issue 4): save_field with history, ${ctx.concurrency} clients`, run: writesBench },
  { name: 'drafts', title: () => 'drafts and publish (issue 5): permissions policy, CMS_GIT_ON_PUBLISH=true', run: draftsBench },
  { name: 'remote', title: () => 'git remote (issue 16): push on publish, upstream sync, reads during a sync', run: remoteBench },
  { name: 'markdown', title: () => 'markdown (issue 6): block round-trip and md_block conversion', run: async (_ctx, report) => { await markdownSection(report) } },
  { name: 'render', title: () => 'render (issue 15): GET /render of a 20 KB Markdown body', run: renderBench },
  { name: 'search', title: () => 'full-text search (issue 17): q at 10,000 and 100,000 entries (BENCH_SCALE_ENTRIES)', run: searchBench },
  { name: 'scale', title: () => `scale (issue 18): start-up, memory and lists at 10,000 and ${process.env.BENCH_SCALE_ENTRIES ?? '100,000'} entries, and over 1,000 collections`, run: scaleBench }
]

function positiveInt (value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`${name} must be a positive integer, got '${value}'`)
  return Number(value)
}

async function runSection (section: Section, ctx: BenchContext): Promise<SectionResult> {
  const report = new SectionReport()
  const result: SectionResult = { section: section.name, title: section.title(ctx), rows: report.rows, error: null, skipped: null }
  const started = performance.now()
  try {
    await section.run(ctx, report)
  } catch (err) {
    if (err instanceof NotAvailableError) result.skipped = err.message
    else result.error = err instanceof Error ? err.message : String(err)
  }
  ctx.log(`${section.name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return result
}

async function main (): Promise<number> {
  const wanted = process.argv.slice(2)
  const unknown = wanted.filter(w => !SECTIONS.some(s => s.name === w))
  if (unknown.length > 0) {
    process.stderr.write(`unknown section(s): ${unknown.join(', ')}; sections: ${SECTIONS.map(s => s.name).join(', ')}\n`)
    return 2
  }
  const ctx = new BenchContext(
    positiveInt(process.env.BENCH_ENTRIES, 10_000, 'BENCH_ENTRIES'),
    positiveInt(process.env.BENCH_CONCURRENCY, 8, 'BENCH_CONCURRENCY'),
    line => { process.stderr.write(`[bench] ${line}\n`) }
  )
  const cpus = os.cpus()
  process.stdout.write(`git-cms bench: node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()} ${os.arch()}\n`)
  process.stdout.write(`entries ${ctx.entries}, concurrency ${ctx.concurrency}; server = \`bin/git-cms serve\` child process, client = this process (node:http, keep-alive)\n\n`)
  const started = performance.now()
  const results: SectionResult[] = []
  try {
    for (const section of SECTIONS.filter(s => wanted.length === 0 || wanted.includes(s.name))) {
      const result = await runSection(section, ctx)
      results.push(result)
      process.stdout.write(`${formatSection(result)}\n\n`)
    }
  } finally {
    await ctx.cleanup()
  }
  process.stdout.write(`${formatSummary(results)} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`)
  return 0
}

main().then(code => { process.exitCode = code }, (err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exitCode = 1
})
