/**
 * Integrity at each size: editors racing on the same few entries with `expectedRevision` (a 409
 * makes the editor read again and retry), while readers read those entries through the API and
 * their files from disk; then every accepted save must be in the file or in history, no two
 * accepted saves may rest on the same revision, no read may have seen half a file, and
 * `git fsck --full --strict` must be clean once the server has stopped.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { ApiClient, HttpStatusError, runLoad } from './api-client.js'
import type { BenchContext } from './bench-context.js'
import { spawnCms } from './cms-process.js'
import { fsckErrors } from './git-checks.js'
import type { SectionReport } from './report.js'
import type { GeneratedSite } from './site-generator.js'
import { summarize } from './stats.js'

/** The last posts of the shared site: the entries raced on (the writes section leaves them alone). */
export const INTEGRITY_IDS = 4
/** Accepted saves per entry: with the body save, under the 50 snapshots history keeps. */
const SAVES_PER_ENTRY = 40
const MAX_ATTEMPTS = 200
/** The raced entries get a body of this size (history keeps it in each snapshot), so a write that is not atomic can be caught half done. */
const BODY_BYTES = 64 * 1024

interface EntryBody { entries: Array<{ id: string, revision: number, data?: { title?: unknown, body?: unknown } }> }
interface Accepted { id: string, value: string, expected: number, revision: number }

/**
 * Runs the integrity section at every size.
 * @param ctx the run's settings
 * @param report where figures go
 */
export async function integrityBench (ctx: BenchContext, report: SectionReport): Promise<void> {
  for (const entries of ctx.sizes) await integrityAt(ctx, report, await ctx.sharedSite(entries))
}

async function integrityAt (ctx: BenchContext, report: SectionReport, site: GeneratedSite): Promise<void> {
  const at = `at ${site.ids.length}`
  const ids = site.ids.slice(-INTEGRITY_IDS)
  const fileOf = (id: string): string => path.join(site.dir, 'content', 'posts', `${id}.md`)
  const server = await spawnCms(site.dir)
  try {
    const editors = await Promise.all(Array.from({ length: ctx.concurrency }, async () => {
      const c = new ApiClient(server.url)
      await c.login()
      return c
    }))
    const reader = editors[0]!
    const read = async (client: ApiClient, id: string): Promise<EntryBody['entries'][number]> => {
      const entry = (await client.get<EntryBody>(`/entries?collection=posts&id=${id}`)).body.entries[0]
      if (entry === undefined) throw new Error(`${id}: not found`)
      return entry
    }

    // A large body on each raced entry; what the API and the file show of it must never change.
    const known = new Map<string, Set<string>>()
    const apiBody = new Map<string, string>()
    const fileTail = new Map<string, string>()
    for (const id of ids) {
      const entry = await read(reader, id)
      const body = String(entry.data?.body ?? '')
      let big = body
      while (big.length < BODY_BYTES) big += `\n\nFiller paragraph ${big.length}: ${body.slice(0, 400).replace(/\n/g, ' ')}`
      await reader.post('/mutate', { type: 'save_field', collection: 'posts', id, field: 'body', value: big })
      const after = await read(reader, id)
      apiBody.set(id, String(after.data?.body ?? ''))
      known.set(id, new Set([String(after.data?.title ?? '')]))
      const text = await readFile(fileOf(id), 'utf8')
      fileTail.set(id, text.slice(text.indexOf('\n---\n', 3) + 5))
    }

    const tag = randomBytes(3).toString('hex')
    const accepted: Accepted[] = []
    let conflicts = 0
    let racing = true
    const torn = { count: 0, reads: 0, example: null as string | null }
    const tornRead = (what: string): void => { torn.count++; torn.example ??= what }
    const readers = [
      (async () => {
        for (let k = 0; racing; k++) {
          const id = ids[k % ids.length]!
          const entry = await read(reader, id)
          torn.reads++
          if (entry.data?.body !== apiBody.get(id)) tornRead(`API ${id}: body of ${String(entry.data?.body).length} chars`)
          else if (!known.get(id)!.has(String(entry.data?.title))) tornRead(`API ${id}: title ${JSON.stringify(entry.data?.title)}`)
        }
      })(),
      (async () => {
        for (let k = 0; racing; k++) {
          const id = ids[k % ids.length]!
          const text = await readFile(fileOf(id), 'utf8')
          torn.reads++
          const front = text.slice(0, text.length - fileTail.get(id)!.length)
          const titles = [...known.get(id)!]
          if (!text.startsWith('---\n') || !text.endsWith(fileTail.get(id)!) || !front.endsWith('\n---\n')) tornRead(`file ${id}: ${text.length} bytes`)
          else if (!titles.some(t => front.includes(t))) tornRead(`file ${id}: no known title in ${JSON.stringify(front.slice(0, 120))}`)
        }
      })()
    ]

    const race = await runLoad(ctx.concurrency, ids.length * SAVES_PER_ENTRY, async (i, w) => {
      const id = ids[i % ids.length]!
      const editor = editors[w]!
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await read(editor, id)
        const value = `race ${tag} ${i} ${attempt}`
        known.get(id)!.add(value)
        try {
          const res = await editor.post<{ ok: boolean, revision: number }>('/mutate', { type: 'save_field', collection: 'posts', id, field: 'title', value, expectedRevision: current.revision })
          accepted.push({ id, value, expected: current.revision, revision: res.body.revision })
          return res.ms
        } catch (err) {
          if (!(err instanceof HttpStatusError) || err.status !== 409) throw err
          conflicts++
        }
      }
      throw new Error(`${id}: no save accepted in ${MAX_ATTEMPTS} attempts`)
    })
    racing = false
    await Promise.all(readers)
    const s = summarize(race.latencies)
    report.info(`racing saves with expectedRevision ${at}`, accepted.length, 'accepted', `${conflicts} answered 409 and retried; ${ctx.concurrency} editors on ${ids.length} entries, accepted p95 ${s.p95.toFixed(1)} ms${race.errors > 0 ? `; ${race.errors} errors: ${race.firstError ?? ''}` : ''}`)

    const lost = await lostUpdates(reader, ids, accepted, fileOf)
    report.exactly(`lost updates (racing saves) ${at}`, lost.count, 0, `${accepted.length} accepted saves checked in file and history${lost.example !== null ? `; e.g. ${lost.example}` : ''}`)
    report.exactly(`torn reads during saves ${at}`, torn.count, 0, `${torn.reads} reads (API and file)${torn.example !== null ? `; e.g. ${torn.example}` : ''}`)
  } finally {
    await server.stop()
  }
  ctx.log(`integrity ${at}: git fsck`)
  const fsck = await fsckErrors(site.dir)
  report.exactly(`git fsck --full --strict errors ${at}`, fsck.errors, 0, fsck.first ?? 'after every section\'s saves, server stopped')
}

/**
 * Counts accepted saves that are missing: two accepted on the same revision (one overwrote the
 * other unseen), the last one absent from the file, an earlier one absent from history.
 */
async function lostUpdates (client: ApiClient, ids: string[], accepted: Accepted[], fileOf: (id: string) => string): Promise<{ count: number, example: string | null }> {
  let count = 0
  let example: string | null = null
  const lose = (what: string): void => { count++; example ??= what }
  for (const id of ids) {
    const mine = accepted.filter(a => a.id === id).sort((a, b) => a.revision - b.revision)
    const bases = new Set<number>()
    for (const a of mine) {
      if (bases.has(a.expected)) lose(`${id}: two saves accepted on revision ${a.expected}`)
      bases.add(a.expected)
    }
    const last = mine[mine.length - 1]
    if (last === undefined) continue
    if (!(await readFile(fileOf(id), 'utf8')).includes(last.value)) lose(`${id}: file lacks "${last.value}"`)
    const history = (await client.get<{ history: Array<{ data?: { title?: unknown } }> }>(`/history?collection=posts&id=${id}`)).body.history
    const titles = new Set(history.map(h => h.data?.title))
    for (const a of mine.slice(0, -1)) if (!titles.has(a.value)) lose(`${id}: history lacks "${a.value}"`)
  }
  return { count, example }
}
