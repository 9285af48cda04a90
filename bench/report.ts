/**
 * Bench figures and how they are printed: one aligned table per section (figure | measured |
 * target | OK/MISS, `-` for information) and a one-line summary, so a reader sees at once what holds.
 */

/** One bench figure. `ok` is null for a figure without a target (printed as information). */
export interface BenchRow {
  name: string
  value: number
  unit: string
  target: string
  ok: boolean | null
  /** Extra words printed after the status (a sample size, a reason). */
  note?: string
}

/** The outcome of one section: its rows, and the error that stopped it early, if any. */
export interface SectionResult {
  section: string
  title: string
  rows: BenchRow[]
  error: string | null
}

/**
 * Collects the rows of one section as they are measured, so whatever was measured before an error
 * is still printed.
 */
export class SectionReport {
  readonly rows: BenchRow[] = []

  /**
   * Adds a figure with a target.
   * @param name what was measured
   * @param value the measured number
   * @param unit its unit (ms, MB, /s, ...)
   * @param target the target in words, e.g. "<= 5 ms"
   * @param ok whether the target holds
   * @param note optional extra words
   */
  check (name: string, value: number, unit: string, target: string, ok: boolean, note?: string): void {
    this.rows.push({ name, value, unit, target, ok, ...(note !== undefined ? { note } : {}) })
  }

  /**
   * Adds a figure without a target.
   * @param name what was measured
   * @param value the measured number
   * @param unit its unit
   * @param note optional extra words
   */
  info (name: string, value: number, unit: string, note?: string): void {
    this.rows.push({ name, value, unit, target: '-', ok: null, ...(note !== undefined ? { note } : {}) })
  }

  /**
   * Adds an "at most" figure.
   * @param name what was measured
   * @param value the measured number
   * @param unit its unit
   * @param max the largest value that meets the target
   * @param note optional extra words
   */
  atMost (name: string, value: number, unit: string, max: number, note?: string): void {
    this.check(name, value, unit, `<= ${formatNumber(max)} ${unit}`, value <= max, note)
  }

  /**
   * Adds a count that must be exactly some number (lost updates: 0; files in a commit: N).
   * @param name what was counted
   * @param value the count
   * @param expected the count that meets the target
   * @param note optional extra words
   * @param ok overrides the check when more than the count decides it
   */
  exactly (name: string, value: number, expected: number, note?: string, ok = value === expected): void {
    this.check(name, value, '', `= ${formatNumber(expected)}`, ok, note)
  }

  /**
   * Adds an "at least" figure.
   * @param name what was measured
   * @param value the measured number
   * @param unit its unit
   * @param min the smallest value that meets the target
   * @param note optional extra words
   */
  atLeast (name: string, value: number, unit: string, min: number, note?: string): void {
    this.check(name, value, unit, `>= ${formatNumber(min)} ${unit}`, value >= min, note)
  }
}

/**
 * Formats a number for a table: one decimal below 100, none above, thousands separated.
 * @param value the number
 * @returns its text
 */
export function formatNumber (value: number): string {
  if (!Number.isFinite(value)) return String(value)
  const digits = Math.abs(value) < 100 && !Number.isInteger(value) ? (Math.abs(value) < 10 ? 2 : 1) : 0
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function status (row: BenchRow): string {
  if (row.ok === null) return '-'
  return row.ok ? 'OK' : 'MISS'
}

/**
 * Renders a section as an aligned text table.
 * @param result the section's rows and error
 * @returns the lines to print (no trailing newline)
 */
export function formatSection (result: SectionResult): string {
  const lines = [`== ${result.title} ==`]
  const table = [['figure', 'measured', 'target', 'status'], ...result.rows.map(r => [
    r.name,
    `${formatNumber(r.value)} ${r.unit}`.trim(),
    r.target,
    status(r) + (r.note !== undefined ? `  (${r.note})` : '')
  ])]
  const widths = [0, 1, 2].map(i => Math.max(...table.map(cells => (cells[i] ?? '').length)))
  for (const cells of table) {
    const [name = '', value = '', target = '', state = ''] = cells
    lines.push(`  ${name.padEnd(widths[0] ?? 0)} | ${value.padStart(widths[1] ?? 0)} | ${target.padEnd(widths[2] ?? 0)} | ${state}`)
  }
  if (result.error !== null) lines.push(`  ERROR: section stopped: ${result.error}`)
  return lines.join('\n')
}

/**
 * The final line: how many figures met their targets, missed them, and which sections failed.
 * @param results every section's result
 * @returns one line
 */
export function formatSummary (results: SectionResult[]): string {
  const rows = results.flatMap(r => r.rows)
  const ok = rows.filter(r => r.ok === true).length
  const miss = rows.filter(r => r.ok === false)
  const failed = results.filter(r => r.error !== null).map(r => r.section)
  const parts = [`${ok} OK`, `${miss.length} MISS${miss.length > 0 ? ` (${miss.map(r => r.name).join('; ')})` : ''}`]
  if (failed.length > 0) parts.push(`sections with errors: ${failed.join(', ')}`)
  return `summary: ${parts.join(', ')}`
}
