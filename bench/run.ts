/**
 * `npm run bench`: generates site repositories, drives the built server (`bin/git-cms serve`) over
 * HTTP and prints one table per section (figure, measured, target, OK/MISS) and a summary line.
 * Benches only print; they never fail a test run.
 *
 *   npm run bench -- [reads|writes|integrity|publish|blocks|studio|ops|decap ...]   (default: every section)
 *   BENCH_ENTRIES=10000        the small size (default 10,000)
 *   BENCH_SCALE_ENTRIES=100000 the large size of reads, writes and integrity (default 100,000; 0: none)
 *   BENCH_CONCURRENCY=8        editors saving at once (default 8)
 *   BENCH_DIR=/some/dir        where the generated sites go (default: the system temp directory)
 */
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { BenchContext } from './bench-context.js'
import { blocksBench } from './blocks-bench.js'
import { integrityBench } from './integrity-bench.js'
import { publishBench } from './publish-bench.js'
import { readsBench } from './reads-bench.js'
import { SectionReport, formatSection, formatSummary, type SectionResult } from './report.js'
import { sideBySideBench } from './side-by-side-bench.js'
import { studioBench } from './studio-bench.js'
import { writesBench } from './writes-bench.js'
import { opsBench } from './ops-bench.js'

interface Section {
  name: string
  title: (ctx: BenchContext) => string
  run: (ctx: BenchContext, report: SectionReport) => Promise<void>
}

const sizes = (ctx: BenchContext): string => ctx.sizes.map(n => n.toLocaleString('en-US')).join(' and ')

/** In this order: reads first, so its first start is the first start of the shared sites. */
const SECTIONS: Section[] = [
  { name: 'reads', title: ctx => `reads: first start, restart, list and search, RSS, at ${sizes(ctx)} entries`, run: readsBench },
  { name: 'writes', title: ctx => `writes: ${ctx.concurrency} editors saving at once (history + fsync), lost updates, at ${sizes(ctx)} entries`, run: writesBench },
  { name: 'integrity', title: ctx => `integrity: racing saves with expectedRevision, torn reads, git fsck, at ${sizes(ctx)} entries`, run: integrityBench },
  { name: 'publish', title: ctx => `publish: 100 drafts in one request (permissions policy, CMS_GIT_ON_PUBLISH=true), at ${ctx.entries.toLocaleString('en-US')} entries`, run: publishBench },
  { name: 'studio', title: () => 'studio: the Studio in Chromium on the demo site (JS of the dashboard, first paint of an entry page)', run: studioBench },
  { name: 'blocks', title: () => 'blocks: the source block list and md_edit at 20 KB and 1 MB (server, in process), and the round-trip corpus', run: blocksBench },
  { name: 'ops', title: () => 'ops: drafts on the git host, a publish seen by another instance, the cost of metrics (200 entries)', run: opsBench },
  { name: 'decap', title: ctx => `side by side with decap-server (editorial modes, one server at a time), at ${ctx.entries.toLocaleString('en-US')} entries`, run: sideBySideBench }
]

function count (value: string | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined || value === '') return fallback
  if (!/^\d+$/.test(value) || Number(value) < min) throw new Error(`${name} must be an integer >= ${min}, got '${value}'`)
  return Number(value)
}

async function runSection (section: Section, ctx: BenchContext): Promise<SectionResult> {
  const report = new SectionReport()
  const result: SectionResult = { section: section.name, title: section.title(ctx), rows: report.rows, error: null }
  const started = performance.now()
  try {
    await section.run(ctx, report)
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err)
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
  const small = count(process.env.BENCH_ENTRIES, 10_000, 'BENCH_ENTRIES', 1)
  const large = count(process.env.BENCH_SCALE_ENTRIES, 100_000, 'BENCH_SCALE_ENTRIES', 0)
  const ctx = new BenchContext(
    large > small ? [small, large] : [small],
    count(process.env.BENCH_CONCURRENCY, 8, 'BENCH_CONCURRENCY', 1),
    line => { process.stderr.write(`[bench] ${line}\n`) }
  )
  const cpus = os.cpus()
  process.stdout.write(`git-cms bench: node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()} ${os.arch()}, load average ${os.loadavg()[0]?.toFixed(1) ?? '?'}\n`)
  process.stdout.write(`sizes ${sizes(ctx)}, concurrency ${ctx.concurrency}; server = \`bin/git-cms serve\` child process, client = this process (node:http, keep-alive)\n\n`)
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
  process.stdout.write(`${formatSummary(results)} (${((performance.now() - started) / 1000).toFixed(0)} s, load average at the end ${os.loadavg()[0]?.toFixed(1) ?? '?'})\n`)
  return 0
}

main().then(code => { process.exitCode = code }, (err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exitCode = 1
})
