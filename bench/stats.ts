/**
 * Latency statistics: percentiles over a sample of request times.
 */

/** The summary of a sample of latencies (ms). */
export interface LatencySummary {
  count: number
  p50: number
  p95: number
  p99: number
  max: number
}

/**
 * Summarizes latencies with nearest-rank percentiles.
 * @param samples request times in ms
 * @returns count, p50, p95, p99, max (0 for an empty sample)
 */
export function summarize (samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number): number => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
  return { count: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted[sorted.length - 1] ?? 0 }
}

/**
 * The median of a few numbers.
 * @param values the numbers
 * @returns their median (0 when empty)
 */
export function median (values: number[]): number {
  return summarize(values).p50
}
