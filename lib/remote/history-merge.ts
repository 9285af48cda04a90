/**
 * Merges `refs/cms/history` changed both here and on the remote into a commit with both parents, so
 * every snapshot survives and the push is a fast-forward: a document both changed gets the union of
 * their snapshots (ts order, the newest MAX_SNAPSHOTS kept). Git plumbing only.
 */
import { MAX_SNAPSHOTS } from '../storage/history-store.js'
import { commitSignedRecord, swapRef, type RemoteContext } from './remote-context.js'

/**
 * Merges the remote's history commit into the local ref (compare-and-swap on `ours`).
 * @returns true when the local ref now holds the merge
 */
export async function mergeHistory (ctx: RemoteContext, ref: string, ours: string, theirs: string): Promise<boolean> {
  const base = (await ctx.git.run(['merge-base', ours, theirs]).catch(() => '')).trim()
  const mine = await changed(ctx, base, ours)
  const their = await changed(ctx, base, theirs)
  const updates = new Map<string, string | null>()
  for (const [file, oid] of their) {
    const own = mine.get(file)
    if (own === undefined) updates.set(file, oid)
    else if (own !== oid) updates.set(file, await unionBlob(ctx, own, oid))
  }
  const tree = await replaceInTree(ctx, `${ours}^{tree}`, '', updates)
  const commit = await commitSignedRecord(ctx, ref, 'cms: history (merged)', tree, [ours, theirs])
  return await swapRef(ctx, ref, commit, ours)
}

/** The files that differ from `base` in `tip` (path -> new blob, null when deleted). */
async function changed (ctx: RemoteContext, base: string, tip: string): Promise<Map<string, string | null>> {
  const out = await ctx.git.run(base === '' ? ['ls-tree', '-r', '-z', tip] : ['diff-tree', '-r', '-z', '--no-renames', base, tip])
  const files = new Map<string, string | null>()
  const parts = out.split('\0')
  if (base === '') {
    for (const line of parts) { const m = /^\d+ blob ([0-9a-f]{40})\t(.+)$/.exec(line); if (m !== null) files.set(m[2]!, m[1]!) }
    return files
  }
  // `:<old mode> <new mode> <old oid> <new oid> <status>` NUL `<path>` NUL
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:\d+ \d+ [0-9a-f]{40} ([0-9a-f]{40}) ([A-Z])/.exec(parts[i]!)
    if (m === null) continue
    files.set(parts[i + 1]!, m[2] === 'D' ? null : m[1]!)
  }
  return files
}

interface SnapshotLike { ts: number }

/** The union of two history documents' snapshots, written as a blob (null when both were deleted). */
async function unionBlob (ctx: RemoteContext, a: string | null, b: string | null): Promise<string | null> {
  const read = async (oid: string | null): Promise<SnapshotLike[]> => {
    if (oid === null) return []
    try {
      const doc = JSON.parse(await ctx.git.run(['cat-file', 'blob', oid])) as { snapshots?: unknown }
      return Array.isArray(doc.snapshots) ? doc.snapshots.filter((s): s is SnapshotLike => typeof (s as SnapshotLike | null)?.ts === 'number') : []
    } catch {
      return []
    }
  }
  const seen = new Set<string>()
  const all: SnapshotLike[] = []
  for (const s of [...await read(a), ...await read(b)]) {
    const key = JSON.stringify(s)
    if (!seen.has(key)) { seen.add(key); all.push(s) }
  }
  if (all.length === 0) return null
  all.sort((x, y) => x.ts - y.ts)
  // ts stays strictly increasing per entry (a restore names a snapshot by its ts).
  for (let i = 1; i < all.length; i++) if (all[i]!.ts <= all[i - 1]!.ts) all[i] = { ...all[i]!, ts: all[i - 1]!.ts + 1 }
  const text = JSON.stringify({ snapshots: all.slice(-MAX_SNAPSHOTS) }) + '\n'
  return (await ctx.git.run(['hash-object', '-w', '--stdin'], { input: text })).trim()
}

/** A tree with files replaced (null: removed), its subtrees rewritten where they changed. */
async function replaceInTree (ctx: RemoteContext, tree: string | null, prefix: string, updates: Map<string, string | null>): Promise<string> {
  const entries = new Map<string, { mode: string, type: string, oid: string }>()
  if (tree !== null) {
    for (const line of (await ctx.git.run(['ls-tree', '-z', tree])).split('\0')) {
      const m = /^(\d+) (\w+) ([0-9a-f]{40})\t(.+)$/.exec(line)
      if (m !== null) entries.set(m[4]!, { mode: m[1]!, type: m[2]!, oid: m[3]! })
    }
  }
  const subdirs = new Set<string>()
  for (const [file, oid] of updates) {
    if (!file.startsWith(prefix)) continue
    const rest = file.slice(prefix.length)
    const slash = rest.indexOf('/')
    if (slash >= 0) { subdirs.add(rest.slice(0, slash)); continue }
    if (oid === null) entries.delete(rest)
    else entries.set(rest, { mode: '100644', type: 'blob', oid })
  }
  for (const dir of subdirs) {
    const existing = entries.get(dir)
    const sub = await replaceInTree(ctx, existing?.type === 'tree' ? existing.oid : null, `${prefix}${dir}/`, updates)
    const empty = (await ctx.git.run(['ls-tree', sub])).trim() === ''
    if (empty) entries.delete(dir)
    else entries.set(dir, { mode: '040000', type: 'tree', oid: sub })
  }
  const input = [...entries].map(([name, e]) => `${e.mode} ${e.type} ${e.oid}\t${name}\0`).join('')
  return (await ctx.git.run(['mktree', '-z'], { input })).trim()
}
