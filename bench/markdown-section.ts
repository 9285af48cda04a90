/**
 * Markdown (issue 6): the rows of `markdownBench()` from ./markdown-bench.js, when that module is
 * there; "not available" otherwise.
 */
import type { SectionReport } from './report.js'

/** A row as markdown-bench returns it. */
interface MarkdownRow { name: string, value: number, unit: string, target: string, ok: boolean | null }

/** Raised when ./markdown-bench.js cannot be loaded: the section is reported as not available. */
export class NotAvailableError extends Error {}

/**
 * Runs the markdown section.
 * @param report where figures go
 */
export async function markdownSection (report: SectionReport): Promise<void> {
  let mod: { markdownBench?: () => Promise<MarkdownRow[]> }
  try {
    // A variable specifier keeps tsc from requiring the module: it is written by someone else.
    const specifier = './markdown-bench.js'
    mod = await import(specifier) as typeof mod
  } catch (err) {
    throw new NotAvailableError(`not available (${err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err)})`)
  }
  if (typeof mod.markdownBench !== 'function') throw new NotAvailableError('not available (markdown-bench.js exports no markdownBench)')
  for (const row of await mod.markdownBench()) {
    if (row.ok === null) report.info(row.name, row.value, row.unit)
    else report.check(row.name, row.value, row.unit, row.target, row.ok)
  }
}
