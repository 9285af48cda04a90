/**
 * Markdown block editing: round-trip fidelity over the corpus in test/fixtures/markdown-corpus
 * and md_block conversion latency on a 20 KB document.
 *
 * Fidelity, for every editable paragraph, heading and list item of every corpus document:
 * (a) sending back its own rendered innerHTML leaves the body byte-identical (target 100%);
 * (b) appending a word changes the rendered document only by that word in that block (target >= 99.5%);
 * (c) appending a word changes the body only by that word (and its space) inserted: no other byte of
 *     the body changes (target >= 99%).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { toHtml } from 'hast-util-to-html'
import { visit } from 'unist-util-visit'
import type { Element, Root } from 'hast'
import { applyBlockEdit } from '../lib/content/markdown/index.js'
import { renderTree } from '../lib/content/markdown/render.js'

/** One bench figure, as the lead's runner reports it. */
export interface BenchResult { name: string, value: number, unit: string, target: string, ok: boolean | null }

/** One corpus document. */
export interface CorpusDoc { name: string, body: string }

/** The fidelity figures of a set of documents. */
export interface Fidelity {
  blocks: number
  identical: number
  appended: number
  /** Blocks whose body changed by the appended word alone (c). */
  inserted: number
  /** The blocks that failed (b), with the reason, for diagnosis. */
  failures: string[]
  identityFailures: string[]
  /** The blocks that failed (c), with the old and new text around the change. */
  insertFailures: string[]
}

const WORD = 'zyxword'
const INLINE_HOSTS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'span', 'blockquote'])

/**
 * Reads the corpus.
 * @returns its documents, sorted by name
 */
export function readCorpus (): CorpusDoc[] {
  // From bench/ (ts-node) or dist/bench/ (built).
  const candidates = ['../test/fixtures/markdown-corpus/', '../../test/fixtures/markdown-corpus/']
    .map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  const dir = candidates.find(d => existsSync(d))
  if (dir === undefined) throw new Error('markdown corpus not found')
  return readdirSync(dir).filter(f => f.endsWith('.md')).sort()
    .map(name => ({ name, body: readFileSync(dir + name, 'utf8') }))
}

function blocksOf (tree: Root): Element[] {
  const out: Element[] = []
  visit(tree, 'element', (node) => { if (typeof node.properties.dataCmsSrc === 'string') out.push(node) })
  return out
}

/** The element an appended word lands in, as a browser shows it: the last paragraph, if any. */
function appendTarget (block: Element): Element {
  const last = [...block.children].reverse().find((c): c is Element => c.type === 'element' && c.tagName === 'p')
  return last ?? block
}

function normalize (html: string): string {
  return html.replace(/\s+/g, ' ').replace(/ ?(<[^>]+>) ?/g, '$1').trim()
}

/** The document with one block emptied and every hint removed (hints move when offsets shift). */
function skeleton (tree: Root, emptied: number): string {
  const copy = structuredClone(tree)
  blocksOf(copy).forEach((el, i) => {
    delete el.properties.dataCmsSrc
    if (i === emptied) el.children = []
  })
  return normalize(toHtml(copy))
}

/**
 * Measures fidelity over documents.
 * @param docs the documents
 * @returns the counts
 */
export function corpusFidelity (docs: CorpusDoc[]): Fidelity {
  const result: Fidelity = { blocks: 0, identical: 0, appended: 0, inserted: 0, failures: [], identityFailures: [], insertFailures: [] }
  for (const doc of docs) {
    const tree = renderTree(doc.body, { collection: 'c', id: 'i' })
    const blocks = blocksOf(tree)
    blocks.forEach((block, i) => {
      if (!INLINE_HOSTS.has(block.tagName)) return
      const src = block.properties.dataCmsSrc as string
      const inner = toHtml(block.children)
      result.blocks++
      const same = applyBlockEdit({ body: doc.body, src, html: inner })
      if (same.body === doc.body && !same.changed) result.identical++
      else result.identityFailures.push(`${doc.name} ${src}`)
      const edited = applyBlockEdit({ body: doc.body, src, html: inner + ' ' + WORD })
      const after = renderTree(edited.body, { collection: 'c', id: 'i' })
      const afterBlocks = blocksOf(after)
      const expected = structuredClone(block)
      appendTarget(expected).children.push({ type: 'text', value: ' ' + WORD })
      const got = afterBlocks[i]
      const ok = afterBlocks.length === blocks.length && got !== undefined &&
        skeleton(after, i) === skeleton(tree, i) &&
        normalize(toHtml(got.children)) === normalize(toHtml(expected.children))
      if (ok) result.appended++
      else result.failures.push(`${doc.name} ${src}: ${JSON.stringify(edited.body.slice(edited.start, edited.end))}`)
      const change = onlyChange(doc.body, edited.body)
      if (change.inserted === ' ' + WORD || change.inserted === WORD + ' ') result.inserted++
      else result.insertFailures.push(`${doc.name} ${src}: ${JSON.stringify(change)}`)
    })
  }
  return result
}

/**
 * What an edit changed: the text between the longest common prefix and suffix of the two bodies.
 * @param before the old body
 * @param after the new body
 * @returns the removed and the inserted text (`removed` is '' for a pure insertion)
 */
export function onlyChange (before: string, after: string): { removed: string, inserted: string } {
  let p = 0
  while (p < before.length && p < after.length && before[p] === after[p]) p++
  let s = 0
  while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++
  const removed = before.slice(p, before.length - s)
  const inserted = after.slice(p, after.length - s)
  return removed === '' ? { removed, inserted } : { removed, inserted: inserted + ' (and bytes removed)' }
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0
}

/**
 * Runs the Markdown bench.
 * @returns fidelity (a), (b) and (c) in percent, md_block conversion latency p50/p95 on a 20 KB body
 */
export async function markdownBench (): Promise<BenchResult[]> {
  const docs = readCorpus()
  const fidelity = corpusFidelity(docs)
  const a = 100 * fidelity.identical / Math.max(1, fidelity.blocks)
  const b = 100 * fidelity.appended / Math.max(1, fidelity.blocks)
  const c = 100 * fidelity.inserted / Math.max(1, fidelity.blocks)
  // A 20 KB document: the LF corpus documents joined, repeated as needed.
  const lf = docs.filter(d => !d.body.includes('\r\n')).map(d => d.body)
  let body = ''
  for (let i = 0; body.length < 20_000; i++) body += (lf[i % lf.length] ?? '') + '\n'
  const tree = renderTree(body, { collection: 'c', id: 'i' })
  const paragraphs = blocksOf(tree).filter(el => el.tagName === 'p')
  const target = paragraphs[Math.floor(paragraphs.length / 2)]
  const times: number[] = []
  if (target !== undefined) {
    const src = target.properties.dataCmsSrc as string
    const html = toHtml(target.children) + ' more'
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now()
      applyBlockEdit({ body, src, html })
      times.push(performance.now() - t0)
    }
  }
  times.sort((x, y) => x - y)
  const p50 = percentile(times, 0.5)
  const p95 = percentile(times, 0.95)
  return [
    { name: 'markdown fidelity (a) no-op edit keeps body', value: round(a), unit: '%', target: '100 %', ok: a === 100 },
    { name: 'markdown fidelity (b) appended word only', value: round(b), unit: '%', target: '>= 99.5 %', ok: b >= 99.5 },
    // Issue 15: no byte but the word's changes.
    { name: 'markdown fidelity (c) body differs by the word alone', value: round(c), unit: '%', target: '>= 99 %', ok: c >= 99 },
    // Issue 6's target: md_block p50 <= 10 ms on a 20 KB document.
    { name: 'md_block conversion p50 (20 KB body)', value: round(p50), unit: 'ms', target: '<= 10 ms', ok: p50 <= 10 },
    { name: 'md_block conversion p95 (20 KB body)', value: round(p95), unit: 'ms', target: '-', ok: null }
  ]
}

function round (n: number): number { return Math.round(n * 100) / 100 }
