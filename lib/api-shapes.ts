/**
 * The JSON shapes of API answers the Studio reads as well as the server writes, and the source hint's
 * grammar both parse. This file imports nothing but types of errors.ts (which imports nothing), so the browser
 * bundles (lib/browser/) can import it too.
 */
import type { ValidationIssue } from './errors.js'

/** A published entry (`published` of POST /publish; the rebuild webhook announces it). */
export interface PublishedRef { collection: string, id: string, revision: number, deleted: boolean }

/** The `push` part of a publish response. */
export type PushOutcome = { ok: true, commit: string } | { ok: false, error: string }

/** The rebuild part of a publish response. */
export interface RebuildOutcome {
  rebuild: { triggered: boolean, ok: boolean }
  retryAvailable?: boolean
  receiptError?: string
}

/** What a publish's commit, push and rebuild webhook add to its response. */
export interface DeliveryFields extends Partial<RebuildOutcome> {
  commit?: string
  commitError?: string
  deploymentTracked?: boolean
  push?: PushOutcome
}

/** Why a draft was not published (its draft is kept). */
export type ConflictCode = 'stale_entry' | 'legacy_draft' | 'recovery_conflict' | 'stale_body' | 'invalid_body'

/** What POST publish answers: every entry in exactly one of the lists (`failed`: refused by its schema or a policy, or a write error). */
export interface PublishReport extends DeliveryFields {
  ok: true
  published: PublishedRef[]
  conflicts: Array<{ collection: string, id: string, code: ConflictCode, message: string, currentRevision?: number }>
  failed: Array<{ collection: string, id: string, error: string, issues?: ValidationIssue[] }>
  retryPush?: { available: boolean }
}

/** One file of the library. */
export interface MediaFile {
  /** Repository-relative path, `/`-separated: the file's identity in the API. */
  path: string
  /** The URL a page uses: `<uploadsUrl>/...`, or for a page-bundle file its bare name (relative to the page). */
  url: string
  name: string
  /** Repository-relative folder holding it. */
  folder: string
  size: number
  /** Last modification, milliseconds since the epoch. */
  mtime: number
  /** MIME type from the extension. */
  type: string
  /** The collection whose uploads folder or page bundle holds it. */
  collection?: string
  /** For a page-bundle file: the entry it sits beside. */
  entry?: { collection: string, id: string }
}

/** Where a page sits in the whole list (of media files, or of entries). */
export interface Pagination {
  page: number
  pageSize: number
  total: number
  totalPages: number
  hasPrev: boolean
  hasNext: boolean
}

/** One page of the library. */
export interface MediaPage {
  files: MediaFile[]
  folders: Array<{ path: string, count: number }>
  pagination: Pagination
}

/** An entry that references a media file: its saved file, or an editor's draft of it. */
export interface MediaReference {
  collection: string
  id: string
  /** The entry file (repository-relative) holding the reference; absent for a draft. */
  file?: string
  /** The reference is in an unpublished draft. */
  draft?: true
  /** Whose draft (the editor id of the draft ref). */
  editor?: string
}

/** The sync state in one word (`sync.state` of GET /deployment). */
export type SyncStateName = 'off' | 'idle' | 'ok' | 'ahead' | 'blocked' | 'diverged' | 'error'

/** `sync` in `GET /deployment`. */
export interface SyncReport {
  configured: boolean
  remote: string | null
  branch: string | null
  state: SyncStateName
  /** A sentence for people. */
  message: string
  lastFetchAt: number | null
  lastFetchError: string | null
  upstreamCommit: string | null
  localCommit: string | null
  lastPush: { at: number, commit: string } | null
  pushPending: boolean
  pushError: string | null
  /** `refs/cms/*` that differ from the remote's in both directions (kept local, not pushed). */
  divergedRefs: string[]
}

/** Formatting added in an in-place edit (`marks` of `md_edit`), as offsets into the DOM text after the edit. */
export interface TextMark {
  type: 'strong' | 'em' | 'code' | 'link'
  start: number
  end: number
  /** The link's target (http, https, mailto or relative). */
  href?: string
}

/** What a source block is. */
export type BlockKind = 'paragraph' | 'heading' | 'listItem' | 'blockquote' | 'code' | 'table' | 'html' |
'thematicBreak' | 'definition' | 'mdx'

/** One source block, as `GET /blocks` answers it (CONTRACT 14). */
export interface SourceBlock {
  /** `<start>:<end>:<hash>` (CONTRACT 7). */
  src: string
  kind: BlockKind
  depth?: number
  /** Its plain text as a reader sees it. */
  text: string
  editable: boolean
}

/** A parsed source hint (`data-cms-src="<start>:<end>:<hash>"`). */
export interface SourceHint {
  start: number
  end: number
  hash: string
}

const HINT = /^(0|[1-9][0-9]{0,15}):(0|[1-9][0-9]{0,15}):([0-9a-f]{16})$/

/**
 * Parses a hint strictly (integers without sign or leading zeros, start < end, 16 lowercase hex).
 * @param src the attribute value (undefined: an element without one)
 * @returns the hint, or null when it is malformed
 */
export function parseSourceHint (src: string | undefined): SourceHint | null {
  if (typeof src !== 'string') return null
  const m = HINT.exec(src)
  if (m === null) return null
  const start = Number(m[1])
  const end = Number(m[2])
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start >= end) return null
  return { start, end, hash: m[3] as string }
}

/** An entry as the API returns it. */
export interface EntryView {
  id: string
  /** In a multilingual collection: the entry's locale and the key its translations share. */
  locale?: string
  translationKey?: string
  /** With `id=` in a multilingual collection: locale -> id of each translation that exists. */
  translations?: Record<string, string>
  /** With `translations`: the locales whose translation is older than the source (the first locale's entry). */
  outdatedTranslations?: string[]
  data?: Record<string, unknown>
  revision: number
  validationIssues?: ValidationIssue[]
  readError?: { message: string }
  draft?: true
  /** With `q`: an excerpt of the first field holding a query word, the words marked (absent for an id-only match). */
  snippet?: Snippet
}

/** With `q`: an excerpt of the field where an entry matched (`snippet` of `GET /entries` and `GET /search`). */
export interface Snippet {
  /** The field's path in the entry's data: `title`, `body`, `seo.description`, `tags.1`. */
  field: string
  /** The excerpt (whitespace shown as spaces), `…` where it was cut. */
  text: string
  /** Where query words are in `text`: `[start, end)` in UTF-16 code units, in order. */
  marks: Array<[number, number]>
}

/** One collection's hits of `GET /search`. */
export interface SearchGroup {
  collection: string
  label: string
  total: number
  entries: Array<{ id: string, title: string, draft?: true, snippet?: Snippet }>
}

/**
 * A slug: lower-case ASCII letters and digits joined by single hyphens (accents dropped).
 * @param text a title, or a file name without its extension
 * @param max the most characters kept
 * @returns the slug, '' when no letter or digit is left
 */
export function slugOf (text: string, max: number): string {
  return text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, max).replace(/-+$/, '')
}
