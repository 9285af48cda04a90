/**
 * YAML entry text with the `yaml` package: bounded parsing (core schema, so timestamps stay text), and
 * edits that splice each changed value into its source range (`Document.toString()` rewrites every node).
 */
import { parse, parseDocument, Document, isAlias, isCollection, isMap, isPair, isScalar, isSeq, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { DocumentOptions, Node, ParseOptions, SchemaOptions, ToStringOptions } from 'yaml'
import { EntryParseError, entryParseError } from './parse-error.js'
import { deleteInlineItem, eolOf, indentRest, isPlainObject, insertLine, lineStart, nextLineStart, placeChanges, removeLines, splice, type DataChange } from './data-diff.js'

/** The largest YAML text read (a bigger data file or frontmatter is an unreadable entry). */
const MAX_YAML_LENGTH = 2 * 1024 * 1024

/** At most this many alias expansions per document (a YAML alias bomb is an unreadable entry). */
const MAX_YAML_ALIASES = 100

const PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions & { maxAliasCount: number } = {
  schema: 'core',
  version: '1.2',
  merge: true,
  maxAliasCount: MAX_YAML_ALIASES,
  logLevel: 'error',
  prettyErrors: false
}

const RENDER_OPTIONS: ToStringOptions = { lineWidth: 0, minContentWidth: 0 }

/** Nesting read at most: the parser recurses once a level, and near the stack's end V8 may abort the process rather than throw. */
const MAX_YAML_NESTING = 512

/** Never less than a YAML text's nesting: open flow brackets plus a line's lead of spaces and `-`/`?` (quotes are not told apart). */
function nestingBound (text: string): number {
  let most = 0
  for (let i = 0, flow = 0, lead = 0, atStart = true; i < text.length; i++) {
    const c = text[i]!
    if (c === '\n') { atStart = true; lead = 0; continue }
    if (atStart && (c === ' ' || c === '\t' || c === '-' || c === '?')) lead++
    else atStart = false
    if (c === '[' || c === '{') flow++
    else if ((c === ']' || c === '}') && flow > 0) flow--
    most = Math.max(most, flow + lead)
  }
  return most
}

/**
 * Parses YAML text into plain data, bounded in size, nesting and alias expansion.
 * @returns the value (null for an empty text); throws EntryParseError when it cannot be read
 */
export function parseYamlText (text: string): unknown {
  if (text.length > MAX_YAML_LENGTH) throw new EntryParseError(`YAML text longer than ${MAX_YAML_LENGTH} characters`)
  if (nestingBound(text) > MAX_YAML_NESTING) throw new EntryParseError(`The YAML is nested deeper than ${MAX_YAML_NESTING} levels`)
  try {
    return parse(text, PARSE_OPTIONS)
  } catch (err) {
    const repaired = repairFlowEnds(text)
    if (repaired !== text) {
      try { return parse(repaired, PARSE_OPTIONS) } catch {}
    }
    throw entryParseError(err)
  }
}

/** Writes data as a new YAML text (for new files, and as the last resort of an edit). */
export function renderYaml (value: unknown): string {
  const doc = new Document(undefined, { schema: 'core', version: '1.2' })
  doc.contents = styledNode(doc, value, null)
  return doc.toString(RENDER_OPTIONS)
}

/** Changes a YAML text from `before` to `after`, touching only the bytes of what changed. */
export function editYamlText (text: string, before: unknown, after: unknown): string {
  if (isPlainObject(after) && Object.keys(after).length === 0) return ''
  const padded: PaddedLine[] = []
  let edited: string | null = null
  try { edited = placeChanges(repairFlowEnds(text, true, padded), before, after, 0, tryChange, t => parseYamlText(unpad(t, padded))) } catch {}
  // A change this module cannot place (aliases, merge keys, odd layouts): write the data anew.
  return edited === null ? renderYaml(after).replace(/\n/g, eolOf(text)) : unpad(edited, padded)
}

function tryChange (text: string, change: DataChange): string | null {
  if (change.path.length === 0) return null
  const doc = parseDocument(text, PARSE_OPTIONS)
  if (doc.errors.length > 0) return null
  const parentPath = change.path.slice(0, -1)
  const key = change.path[change.path.length - 1]!
  const parent = parentPath.length === 0 ? doc.contents : doc.getIn(parentPath, true)
  const eol = eolOf(text)
  const style = styleOf(text)
  if (isSeq(parent) && typeof key === 'number' && change.op !== 'set') {
    return change.op === 'add' ? addItem(text, parent, change.value, eol, style) : deleteItem(text, parent, key)
  }
  if (change.op === 'add') {
    if (parent === null && parentPath.length === 0) return insertLine(text, text.length, indentRest(render(String(key), change.value, null, style), '', eol) + eol, eol)
    if (!isMap(parent) || parent.flow === true || parent.items.length === 0) return null
    return addKey(text, parent, String(key), change.value, eol, style)
  }
  if (isMap(parent)) {
    const pair = parent.items.find(p => isScalar(p.key) && String(p.key.value) === String(key))
    // A key that only a merge (`<<: *base`) provides: an explicit key overrides it.
    if (pair === undefined && change.op === 'set' && parent.flow !== true && parent.items.length > 0) return addKey(text, parent, String(key), change.value, eol, style)
    if (pair === undefined || !isScalar(pair.key) || pair.key.range == null) return null
    if (change.op === 'delete') {
      const value = pair.value as Node | null
      return parent.flow === true ? null : removeLines(text, pair.key.range[0], value?.range != null ? valueEnd(text, value) : pair.key.range[1])
    }
    return setMapValue(text, pair as Pair<Scalar, Node | null>, change.value, eol, style)
  }
  if (isSeq(parent) && typeof key === 'number' && change.op === 'set') {
    const item = parent.items[key] as Node | undefined
    if (item?.range == null) return null
    return setSeqItem(text, parent, item, change.value, eol, style)
  }
  return null
}

interface Style { indentSeq: boolean, flowPadding: boolean }

/** How the file writes block sequences under a key and flow collections. */
function styleOf (text: string): Style {
  return {
    indentSeq: !/^([ \t]*)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(text),
    flowPadding: /[[{] \S/.test(text) && !/[[{][^ \s\]}]/.test(text)
  }
}

function column (text: string, offset: number): number {
  return offset - lineStart(text, offset)
}

/** The end of a node's value, before trailing line breaks and spaces. */
function valueEnd (text: string, node: Node): number {
  let end = node.range![1]
  while (end > node.range![0] && /[\s]/.test(text[end - 1]!)) end--
  return end
}

function isInline (node: Node | null): boolean {
  if (node === null) return false
  if (isScalar(node)) return node.type !== 'BLOCK_FOLDED' && node.type !== 'BLOCK_LITERAL'
  if (isCollection(node)) return node.flow === true
  return isAlias(node)
}

/**
 * Plain scalars that YAML 1.1 readers (Jekyll's Psych) take for booleans or numbers although the
 * 1.2 core schema reads them as strings: new strings like these are written quoted.
 */
const YAML11_NOT_STRING = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|[0-9](?=[0-9]*_)[0-9_]*(\.[0-9_]*)?))$/

function quoteForYaml11 (node: Node, value: unknown): void {
  if (!isScalar(node)) {
    if (isCollection(node)) for (const item of node.items) quoteForYaml11(isPair(item) ? item.value as Node : item as Node, undefined)
    return
  }
  const v = value === undefined ? node.value : value
  if (typeof v === 'string' && YAML11_NOT_STRING.test(v)) node.type = 'QUOTE_DOUBLE'
}

/** A node for `value` in the style of the node it replaces. */
function styledNode (doc: Document, value: unknown, old: Node | null): Node {
  const node = doc.createNode(value) as Node
  quoteForYaml11(node, value)
  if (old === null) return node
  if (isScalar(node) && isScalar(old) && typeof value === 'string' && typeof old.value === 'string' && old.type !== undefined) {
    node.type = old.type
  }
  if (isCollection(node) && isCollection(old) && old.flow === true) node.flow = true
  return node
}

/** `key: value` (`- value` when key is null; `[value]` when flow) as the yaml package writes it, in the old node's style. */
function render (key: string | null, value: unknown, old: Node | null, style: Style, flow = false): string {
  const doc = new Document(undefined, { schema: 'core', version: '1.2' })
  const node = styledNode(doc, value, old)
  if (key === null) {
    const seq = new YAMLSeq()
    if (flow) {
      seq.flow = true
      if (isCollection(node)) node.flow = true
    }
    seq.items.push(node)
    doc.contents = seq
  } else {
    const map = new YAMLMap()
    map.items.push(new Pair(doc.createNode(key), node))
    doc.contents = map
  }
  return doc.toString({ ...RENDER_OPTIONS, indentSeq: style.indentSeq, flowCollectionPadding: style.flowPadding }).replace(/\n$/, '')
}

/** Renders `value` as it follows a key's `:` (or a sequence's `-`). */
function renderAfter (indicator: 'map' | 'seq', value: unknown, old: Node | null, style: Style): string {
  return indicator === 'map' ? render('k', value, old, style).slice(2) : render(null, value, old, style).slice(1)
}

function setMapValue (text: string, pair: Pair<Scalar, Node | null>, value: unknown, eol: string, style: Style): string | null {
  const old = pair.value
  const indent = ' '.repeat(column(text, pair.key.range![0]))
  const rendered = renderAfter('map', value, old, style)
  if (old !== null && old.range != null && isInline(old) && rendered.startsWith(' ') && !rendered.includes('\n') && !(isScalar(old) && old.source === '' && old.range[0] === old.range[1])) {
    return splice(text, old.range[0], old.range[1], rendered.slice(1))
  }
  const colon = text.indexOf(':', pair.key.range![1])
  if (colon === -1 || text.slice(pair.key.range![1], colon).trim() !== '') return null
  const end = old?.range != null ? Math.max(valueEnd(text, old), colon + 1) : colon + 1
  if (old?.range != null && old.range[0] < colon) return null
  return splice(text, colon + 1, end, indentRest(rendered, indent, eol))
}

function setSeqItem (text: string, seq: YAMLSeq, item: Node, value: unknown, eol: string, style: Style): string | null {
  if (seq.flow === true) {
    const rendered = renderAfter('map', value, item, style)
    if (rendered.includes('\n') || !rendered.startsWith(' ')) return null
    return splice(text, item.range![0], item.range![1], rendered.slice(1))
  }
  const dash = text.lastIndexOf('-', item.range![0])
  if (dash === -1 || text.slice(dash + 1, item.range![0]).trim() !== '') return null
  const rendered = renderAfter('seq', value, item, style)
  if (isInline(item) && rendered.startsWith(' ') && !rendered.includes('\n')) {
    return splice(text, item.range![0], item.range![1], rendered.slice(1))
  }
  const indent = ' '.repeat(column(text, dash))
  return splice(text, dash + 1, Math.max(valueEnd(text, item), dash + 1), indentRest(rendered, indent, eol))
}

function addKey (text: string, map: YAMLMap, key: string, value: unknown, eol: string, style: Style): string | null {
  const first = map.items[0]!
  const last = map.items[map.items.length - 1]!
  if (!isScalar(first.key) || first.key.range == null || !isScalar(last.key) || last.key.range == null) return null
  // (A map that starts on a sequence's `- ` line has its keys at the column after the dash.)
  const keyStart = first.key.range[0]
  const indent = ' '.repeat(column(text, keyStart))
  const lastNode = (last.value as Node | null) ?? last.key
  const at = nextLineStart(text, valueEnd(text, lastNode))
  const line = indent + indentRest(render(key, value, null, style), indent, eol) + eol
  return insertLine(text, at, line, eol)
}

function addItem (text: string, seq: YAMLSeq, value: unknown, eol: string, style: Style): string | null {
  const items = seq.items as Node[]
  const last = items[items.length - 1]
  if (last?.range == null) return null
  if (seq.flow === true) {
    // One item in the style of the item before it.
    const rendered = render(null, value, last, { ...style, flowPadding: false }, true).slice(1, -1)
    if (rendered.includes('\n')) return null
    const first = items[0]!
    const comma = items.length > 1 && text.slice(first.range![1], items[1]!.range![0]) === ',' ? ',' : ', '
    return splice(text, last.range[1], last.range[1], comma + rendered)
  }
  const dash = text.lastIndexOf('-', last.range[0])
  if (dash === -1 || text.slice(lineStart(text, dash), dash).trim() !== '') return null
  const indent = ' '.repeat(column(text, dash))
  const line = indent + '-' + indentRest(renderAfter('seq', value, isCollection(last) ? null : last, style), indent, eol) + eol
  const at = nextLineStart(text, valueEnd(text, last))
  return insertLine(text, at, line, eol)
}

function deleteItem (text: string, seq: YAMLSeq, index: number): string | null {
  const items = seq.items as Node[]
  const item = items[index]
  if (item?.range == null || items.length < 2) return null
  if (seq.flow === true) return items.every(i => i.range != null) ? deleteInlineItem(text, items.map(i => i.range!), index) : null
  const dash = text.lastIndexOf('-', item.range[0])
  return dash === -1 ? null : removeLines(text, dash, valueEnd(text, item))
}

interface PaddedLine { pad: string, line: string }

/** Takes the repair's padding off again (the padded lines, in order, that an edit left alone). */
function unpad (text: string, padded: PaddedLine[]): string {
  if (padded.length === 0) return text
  const lines = text.split('\n')
  let at = 0
  for (const { pad, line } of padded) {
    const i = lines.indexOf(pad + line, at)
    if (i === -1) continue
    lines[i] = line
    at = i + 1
  }
  return lines.join('\n')
}

/* Jekyll (Psych) accepts a flow collection closed at column 1 inside an indented block, YAML 1.2 does not: its
   lines are indented past the opening key (with `onlyIfBroken`, only when the text does not parse as it is). */
function repairFlowEnds (text: string, onlyIfBroken = false, padded: PaddedLine[] = []): string {
  if (!/^[\]}]/m.test(text)) return text
  if (onlyIfBroken) {
    try { parse(text, PARSE_OPTIONS); return text } catch {}
  }
  const lines = text.split('\n')
  // The nearest opening line closes once: a scan back from every closing line was quadratic (16 KB of `]` lines: 1 s).
  for (let i = 1, open = /:[ \t]*[[{]/.test(lines[0]!) ? 0 : -1; i < lines.length; i++) {
    const closing = open >= 0 && /^[\]}][ \t]*(#.*)?\r?$/.test(lines[i]!)
    const pad = closing ? ' '.repeat((/^ */.exec(lines[open]!)?.[0].length ?? 0) + 1) : ''
    for (let j = open + 1; closing && j <= i; j++) {
      padded.push({ pad, line: lines[j]! })
      lines[j] = pad + lines[j]!
    }
    if (/:[ \t]*[[{]/.test(lines[i]!)) open = i
    else if (closing) open = -1
  }
  return lines.join('\n')
}
