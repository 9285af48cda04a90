/**
 * A line diff of two texts as character-range replacements of the first: what changed between the
 * base body a draft was made against and the base body now.
 */

/** `old.slice(start, end)` replaced by `text`. */
export interface Replacement {
  start: number
  end: number
  text: string
}

/** Above this many cells the middle is reported as one change instead of diffed line by line. */
const MAX_CELLS = 4_000_000

/**
 * Diffs two texts by lines (each line with its own terminator), as a longest common subsequence.
 * @param a the old text
 * @param b the new text
 * @returns sorted, non-overlapping replacements turning a into b
 */
export function lineDiff (a: string, b: string): Replacement[] {
  const x = splitLines(a)
  const y = splitLines(b)
  let head = 0
  while (head < x.length && head < y.length && x[head] === y[head]) head++
  let tail = 0
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++
  const xs = x.slice(head, x.length - tail)
  const ys = y.slice(head, y.length - tail)
  const offsetA = x.slice(0, head).join('').length
  if (xs.length === 0 && ys.length === 0) return []
  if (xs.length * ys.length > MAX_CELLS) {
    return [{ start: offsetA, end: offsetA + xs.join('').length, text: ys.join('') }]
  }
  // lcs[i][j]: length of the LCS of xs[i..] and ys[j..], flattened.
  const w = ys.length + 1
  const lcs = new Uint32Array((xs.length + 1) * w)
  for (let i = xs.length - 1; i >= 0; i--) {
    for (let j = ys.length - 1; j >= 0; j--) {
      lcs[i * w + j] = xs[i] === ys[j] ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0)
    }
  }
  const out: Replacement[] = []
  let i = 0
  let j = 0
  let at = offsetA
  let open: Replacement | null = null
  while (i < xs.length || j < ys.length) {
    if (i < xs.length && j < ys.length && xs[i] === ys[j]) {
      if (open !== null) { out.push(open); open = null }
      at += (xs[i] as string).length
      i++; j++
    } else if (j < ys.length && (i === xs.length || (lcs[i * w + j + 1] ?? 0) >= (lcs[(i + 1) * w + j] ?? 0))) {
      open ??= { start: at, end: at, text: '' }
      open.text += ys[j] as string
      j++
    } else {
      open ??= { start: at, end: at, text: '' }
      at += (xs[i] as string).length
      open.end = at
      i++
    }
  }
  if (open !== null) out.push(open)
  return out
}

function splitLines (text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? []
}
