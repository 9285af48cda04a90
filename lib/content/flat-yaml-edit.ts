/**
 * The common save of a flat YAML text (the shape `flat-yaml.ts` reads) without the `yaml` package:
 * top-level string values replaced by plain-safe strings (a title save). Each value's source on its
 * `key: value` line is replaced in its own style (plain, single- or double-quoted), byte for byte
 * what `editYamlText` writes for it; the result is read back with the flat reader and must give the
 * new data exactly. Anything else (another kind of change, a value on several lines, a text the flat
 * reader declines) is declined with `undefined` and goes to `editYamlText`. Profiled (issue 18): the
 * full parser's document for a five-line frontmatter, parsed twice per save, was the largest piece of
 * a save's own CPU.
 */
import { isDeepStrictEqual } from 'node:util'
import { diffData, isPlainObject } from './data-diff.js'
import { readFlatYaml } from './flat-yaml.js'
import { isPlainSafeString } from './yaml-text.js'

/**
 * Edits a flat YAML text whose data is `before` into one holding `after`.
 * @param text the YAML text (a frontmatter's inner text or a data file)
 * @param before its data, as `readFlatYaml(text)` gives it
 * @param after the data to write
 * @returns the new text, or undefined when this edit is not one handled here
 */
export function editFlatYaml (text: string, before: Record<string, unknown>, after: unknown): string | undefined {
  if (!isPlainObject(after)) return undefined
  const changes = diffData(before, after)
  if (changes.length === 0) return text
  let current = text
  for (const change of changes) {
    if (change.op !== 'set' || change.path.length !== 1) return undefined
    const key = change.path[0]
    const value = change.value
    if (typeof key !== 'string' || typeof before[key] !== 'string' || typeof value !== 'string' || !isPlainSafeString(value)) return undefined
    const edited = replaceValue(current, key, value)
    if (edited === undefined) return undefined
    current = edited
  }
  // Read back: the flat reader gives what the full parser would, so this is the edit's proof.
  const check = readFlatYaml(current)
  return check !== undefined && isDeepStrictEqual(check, after) ? current : undefined
}

/** Replaces the single-line scalar after `key:` at the start of a line, in its quoting style. */
function replaceValue (text: string, key: string, value: string): string | undefined {
  const head = key + ':'
  const newline = text.startsWith(head) ? -1 : text.indexOf('\n' + head)
  if (newline === -1 && !text.startsWith(head)) return undefined
  let from = newline + 1 + head.length
  // `key:` then at least one space (the flat reader's key line), then the value.
  if (text.charCodeAt(from) !== 32) return undefined
  while (text.charCodeAt(from) === 32) from++
  let end = text.indexOf('\n', from)
  if (end === -1) end = text.length
  // The value's own bytes: without the line's trailing spaces and CR.
  let to = end
  while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 13)) to--
  if (to === from) return undefined
  const first = text.charCodeAt(from)
  let source: string
  if (first === 39 /* ' */) source = `'${value}'`
  else if (first === 34 /* " */) source = `"${value}"`
  else if (first === 124 /* | */ || first === 62 /* > */ || first === 91 /* [ */ || first === 123 /* { */) return undefined
  else source = value
  return text.slice(0, from) + source + text.slice(to)
}
