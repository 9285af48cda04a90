/**
 * What the index keeps of one entry's content: its fields (a Markdown body left in the file, with
 * where it starts), validation issues, title and sort key (`q` goes through the full-text index of
 * lib/search/, so a row keeps no search text of its own). Computed the same way in
 * the process and in the index worker.
 */
import type { ValidationIssue } from '../errors.js'
import { isMarkdownFormat, type EntryData, type EntryFormat } from '../content/formats.js'
import { titlesOf } from '../content/entry-search.js'
import { detachString, detachStrings } from './detach-strings.js'

/** The parts of a collection's definition a row depends on. */
export interface RowRules {
  format: EntryFormat
  titleField: string | null
  orderField: string
}

/** One entry as the index holds it (what lists filter and sort on), without a Markdown body. */
export interface IndexRow {
  id: string
  file: string
  sig: string
  revision: number
  /** The entry's data, except a Markdown `body` when `bodyAt` is set. */
  fields?: EntryData
  /** Where the Markdown body starts in the file's text (UTF-16 code units). */
  bodyAt?: number
  readError?: { message: string }
  validationIssues?: ValidationIssue[]
  title: string
  order: number | null
}

/** An entry's indexed content. */
export interface RowContent {
  /** The entry's data, except a Markdown `body` when `bodyAt` is set. */
  fields: EntryData
  /** Where the Markdown body starts in the file's text (UTF-16 code units). */
  bodyAt?: number
  validationIssues?: ValidationIssue[]
  title: string
  order: number | null
}

/**
 * Computes an entry's indexed content.
 * @param id entry id
 * @param data its parsed data
 * @param text the file's text when it is known to be the one `data` came from, else null
 * @param rules the collection's format, title and order fields
 * @param validate the collection's schema check
 * @returns the content to keep
 */
export function rowContent (id: string, data: EntryData, text: string | null, rules: RowRules, validate: (data: EntryData) => ValidationIssue[]): RowContent {
  const titles = titlesOf(data, rules.titleField)
  const order = data[rules.orderField]
  const content: RowContent = {
    fields: data,
    title: titles[0] ?? id,
    order: typeof order === 'number' ? order : null
  }
  const issues = validate(data)
  if (issues.length > 0) content.validationIssues = issues
  const bodyAt = isMarkdownFormat(rules.format) && text !== null ? bodyStart(data, text) : null
  if (bodyAt !== null) {
    // The fields and title outlive the file's text, which their strings must not keep alive.
    const { body: _body, ...fields } = data
    content.fields = detachStrings(fields)
    content.bodyAt = bodyAt
    // The title is one of the fields: the row shares that string rather than holding a copy.
    content.title = titlesOf(content.fields, rules.titleField)[0] ?? detachString(content.title)
  }
  return content
}

/**
 * Where a collection's rows find the file of an id when the row records none: the file a new
 * entry with that id would have (`<folder>/<id>.md`), which nearly every entry has.
 */
export interface RowHome {
  /**
   * The file an id has by default.
   * @param id entry id
   * @returns absolute path, or null when the layout has no default place for it
   */
  defaultFile: (id: string) => string | null
  /**
   * Whether a file is the default one of an id (`defaultFile(id) === file`, cheaper).
   * @param id entry id
   * @param file absolute path
   * @returns true when it is
   */
  isDefaultFile: (id: string, file: string) => boolean
}

/** The parts of a row that few rows have, kept together so a row spends one slot on all of them. */
interface RowExtra {
  file?: string
  readError?: { message: string }
  validationIssues?: ValidationIssue[]
}

/**
 * Where a row's content waits until it is first used: the persisted snapshot's bytes
 * (`row-table.ts`), one record per row.
 */
export interface RowSource {
  /**
   * A record's content, parsed.
   * @param at record number
   * @param id the row's id
   * @returns the content
   */
  content: (at: number, id: string) => RowContent
  /**
   * A record's file signature.
   * @param at record number
   * @returns the signature string
   */
  sig: (at: number) => string
}

/**
 * A row as the index keeps it (issue 18: memory): the same fields as `IndexRow`, but the file path
 * (80 bytes and more per entry) is derived from the id unless the entry's file is another one, and
 * the rare parts (another file, a read error, validation issues) share one slot. One hidden class
 * for every row of every collection (the home is a slot, not a subclass).
 *
 * A row taken from the persisted snapshot at a restart is lazy: its fields, title, body start and
 * validation issues stay in the snapshot's buffer until first read (a list sorts by id and order,
 * which the row has), so a restart makes one object per row instead of one per row and field, and
 * an entry no request touched costs its bytes in that buffer. While lazy, `#title` is null, and the
 * fields and body start slots hold the source and the record number.
 */
export class StoredRow implements IndexRow {
  id: string
  revision: number
  order: number | null
  readonly #home: RowHome
  #extra: RowExtra | null
  #fields: EntryData | RowSource | undefined
  #bodyAt: number | undefined
  #title: string | null
  /** Null while lazy: the source has it (a string per row less at 100,000 rows). */
  #sig: string | null

  /**
   * @param home gives the default file of an id
   * @param id entry id
   * @param file absolute file path (kept only when it is not the default one; null: the default one)
   * @param sig the file's signature
   * @param revision the entry's revision
   * @param content from `rowContent`, or `{ message }` for an unreadable file
   */
  constructor (home: RowHome, id: string, file: string | null, sig: string, revision: number, content: RowContent | { message: string }) {
    this.id = id
    this.#sig = sig
    this.revision = revision
    this.#home = home
    let extra: RowExtra | null = file === null || home.isDefaultFile(id, file) ? null : { file }
    if ('message' in content) {
      this.#fields = undefined
      this.#bodyAt = undefined
      this.#title = id
      this.order = null
      extra = { ...extra, readError: { message: content.message } }
    } else {
      this.#fields = content.fields
      this.#bodyAt = content.bodyAt
      this.#title = content.title
      this.order = content.order
      if (content.validationIssues !== undefined) extra = { ...extra, validationIssues: content.validationIssues }
    }
    this.#extra = extra
  }

  /**
   * A row whose content (and signature) is read from `source` when first used.
   * @param home gives the default file of an id
   * @param id entry id
   * @param file absolute file path, or null for the id's default one
   * @param revision the entry's revision
   * @param order the sort key
   * @param source where the content is
   * @param at its record number there
   * @returns the row
   */
  static lazy (home: RowHome, id: string, file: string | null, revision: number, order: number | null, source: RowSource, at: number): StoredRow {
    const row = new StoredRow(home, id, file, '', revision, LAZY)
    row.order = order
    row.#sig = null
    row.#fields = source
    row.#bodyAt = at
    row.#title = null
    return row
  }

  /** The file's signature when the row was made (built from the source each time while lazy). */
  get sig (): string {
    return this.#sig ?? (this.#fields as RowSource).sig(this.#bodyAt as number)
  }

  /** The entry's data, except a Markdown `body` when `bodyAt` is set. */
  get fields (): EntryData | undefined {
    if (this.#title === null) this.#materialize()
    return this.#fields as EntryData | undefined
  }

  /** Where the Markdown body starts in the file's text (UTF-16 code units). */
  get bodyAt (): number | undefined {
    if (this.#title === null) this.#materialize()
    return this.#bodyAt
  }

  /** The entry's title. */
  get title (): string {
    if (this.#title === null) this.#materialize()
    return this.#title as string
  }

  /** The entry's absolute file path. */
  get file (): string {
    return this.#extra?.file ?? this.#home.defaultFile(this.id) as string
  }

  /** Why the entry's file cannot be read (a row without data), if so. */
  get readError (): { message: string } | undefined {
    return this.#extra?.readError
  }

  /** The entry's validation issues against the collection's schema, if any. */
  get validationIssues (): ValidationIssue[] | undefined {
    if (this.#title === null) this.#materialize()
    return this.#extra?.validationIssues
  }

  /**
   * Where the row's content still waits unparsed (a snapshot rewrite copies its bytes as they are).
   * @returns the source and record number, or null once the content is parsed
   */
  lazySource (): { source: RowSource, at: number } | null {
    return this.#title === null ? { source: this.#fields as RowSource, at: this.#bodyAt as number } : null
  }

  /**
   * Whether the row's file is the default one of its id (a snapshot then leaves the path out).
   * @returns true when no other file is recorded
   */
  hasDefaultFile (): boolean {
    return this.#extra?.file === undefined
  }

  /**
   * Whether the row's file is this one (without building the default path).
   * @param file absolute path
   * @returns true when it is the row's file
   */
  hasFile (file: string): boolean {
    const own = this.#extra?.file
    return own === undefined ? this.#home.isDefaultFile(this.id, file) : own === file
  }

  #materialize (): void {
    const source = this.#fields as RowSource
    const at = this.#bodyAt as number
    const content = source.content(at, this.id)
    this.#sig = source.sig(at)
    this.#fields = content.fields
    this.#bodyAt = content.bodyAt
    this.#title = content.title
    if (content.validationIssues !== undefined) this.#extra = { ...this.#extra, validationIssues: content.validationIssues }
  }
}

/** The placeholder content of a lazy row while it is made. */
const LAZY: RowContent = { fields: {}, title: '', order: null }

/**
 * An index row from an entry's content, or from the reason its file cannot be read.
 * @param id entry id
 * @param file absolute file path
 * @param sig the file's signature
 * @param revision the entry's revision
 * @param content from `rowContent`, or `{ message }` for an unreadable file
 * @returns the row
 */
export function makeRow (id: string, file: string, sig: string, revision: number, content: RowContent | { message: string }): IndexRow {
  if ('message' in content) return { id, file, sig, revision, readError: { message: content.message }, title: id, order: null }
  return { id, file, sig, revision, ...content }
}

/**
 * Where a Markdown body starts in its file's text, when the text ends with it and `body` is the
 * data's last field (so `{ ...fields, body }` rebuilds the same object); null otherwise.
 */
function bodyStart (data: EntryData, text: string): number | null {
  const body = data.body
  if (typeof body !== 'string' || !text.endsWith(body)) return null
  let last: string | undefined
  for (const key in data) last = key
  return last === 'body' ? text.length - body.length : null
}
