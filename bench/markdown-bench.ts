/**
 * Markdown block editing: round-trip fidelity over the corpus in test/fixtures/markdown-corpus.
 * No longer a bench section (issue 28 retired its targets); the fidelity tests under
 * test/content/markdown/ still use these helpers, which belong in test/helpers/.
 *
 * Fidelity, for every editable paragraph, heading and list item of every corpus document:
 * (a) sending back its own rendered innerHTML leaves the body byte-identical (target 100%);
 * (b) appending a word changes the rendered document only by that word in that block (target >= 99.5%);
 * (c) appending a word changes the body only by that word (and its space) inserted: no other byte of
 *     the body changes (target >= 99%).
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { toHtml } from 'hast-util-to-html'
import { visit } from 'unist-util-visit'
import type { Element, Root } from 'hast'
import { applyBlockEdit } from '../lib/content/markdown/index.js'
import { applyTextEdit } from '../lib/content/markdown/text-edit.js'
import { renderTree } from '../lib/content/markdown/render.js'

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

/** How a block edit is sent: md_block's edited HTML, or md_edit's DOM text before and after. */
export type BlockEditor = 'md_block' | 'md_edit'

/** A rendered element's text as a browser's textContent gives it. */
function domText (node: Element | Root): string {
  let text = ''
  visit(node, 'text', (t) => { text += t.value })
  return text
}

/** One block edit through the chosen command's content function; the body unchanged when refused. */
function editBlock (editor: BlockEditor, body: string, src: string, block: Element, appended: string): { body: string, start: number, end: number, changed: boolean } {
  if (editor === 'md_block') return applyBlockEdit({ body, src, html: toHtml(block.children) + appended })
  const before = domText(block)
  try {
    return applyTextEdit({ body, src, before, after: before + appended })
  } catch (err) {
    return { body, start: 0, end: 0, changed: false, error: (err as Error).message } as never
  }
}

/**
 * Measures fidelity over documents.
 * @param docs the documents
 * @param editor the command whose edits are measured (md_block by default)
 * @returns the counts
 */
export function corpusFidelity (docs: CorpusDoc[], editor: BlockEditor = 'md_block'): Fidelity {
  const result: Fidelity = { blocks: 0, identical: 0, appended: 0, inserted: 0, failures: [], identityFailures: [], insertFailures: [] }
  for (const doc of docs) {
    const tree = renderTree(doc.body, { collection: 'c', id: 'i' })
    const blocks = blocksOf(tree)
    blocks.forEach((block, i) => {
      if (!INLINE_HOSTS.has(block.tagName)) return
      const src = block.properties.dataCmsSrc as string
      result.blocks++
      const same = editBlock(editor, doc.body, src, block, '')
      if (same.body === doc.body && !same.changed && (same as { error?: string }).error === undefined) result.identical++
      else result.identityFailures.push(`${doc.name} ${src}`)
      const edited = editBlock(editor, doc.body, src, block, ' ' + WORD)
      const after = renderTree(edited.body, { collection: 'c', id: 'i' })
      const afterBlocks = blocksOf(after)
      const expected = structuredClone(block)
      appendTarget(expected).children.push({ type: 'text', value: ' ' + WORD })
      const got = afterBlocks[i]
      const ok = afterBlocks.length === blocks.length && got !== undefined &&
        skeleton(after, i) === skeleton(tree, i) &&
        normalize(toHtml(got.children)) === normalize(toHtml(expected.children))
      if (ok) result.appended++
      else result.failures.push(`${doc.name} ${src}: ${(edited as { error?: string }).error ?? JSON.stringify(edited.body.slice(edited.start, edited.end))}`)
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
