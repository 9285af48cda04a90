/** Listing the media library: filters, sort and paging checked here (400 for anything malformed), answered by the media index. */
import { BadRequestError } from '../errors.js'
import { parseWholeNumber } from '../content/data-depth.js'
import { assertMediaPath, type MediaQuery } from '../storage/media-index.js'
import type { MediaPage } from '../api-shapes.js'
import type { CommandContext } from './command-context.js'

/** Largest page the library answers (a larger `pageSize` is a 400, not silently clamped). */
const MEDIA_MAX_PAGE_SIZE = 200
/** Page size when none is asked for. */
const MEDIA_DEFAULT_PAGE_SIZE = 24

/** The raw query parameters of a list request (each a single string, or absent). */
export type MediaListParams = Partial<Record<'folder' | 'q' | 'type' | 'sort' | 'order' | 'page' | 'pageSize' | 'minSize' | 'maxSize' | 'after' | 'before', string>>

/** One page of the media library: its files, every folder with its count, and the pagination. */
export async function listMedia (ctx: CommandContext, params: MediaListParams): Promise<MediaPage> {
  return await ctx.services.media.list(parseMediaQuery(params))
}

/** Checks and converts the query parameters of a list request (400 naming the parameter). */
function parseMediaQuery (params: MediaListParams): MediaQuery {
  const sort = oneOf(params.sort, 'sort', ['name', 'size', 'date'] as const, 'date')
  const order = oneOf(params.order, 'order', ['asc', 'desc'] as const, sort === 'name' ? 'asc' : 'desc')
  const kind = params.type === undefined || params.type === '' ? undefined : oneOf(params.type, 'type', ['image', 'pdf'] as const, 'image')
  const pageSize = int(params.pageSize, 'pageSize', MEDIA_DEFAULT_PAGE_SIZE, 1)
  if (pageSize > MEDIA_MAX_PAGE_SIZE) throw new BadRequestError(`pageSize is at most ${MEDIA_MAX_PAGE_SIZE}`, { field: 'pageSize', max: MEDIA_MAX_PAGE_SIZE })
  const q = params.q === undefined || params.q === '' ? undefined : params.q
  const folder = params.folder === undefined || params.folder === '' ? undefined : folderOf(params.folder)
  const query: MediaQuery = { sort, order, page: int(params.page, 'page', 1, 1), pageSize }
  if (folder !== undefined) query.folder = folder
  if (q !== undefined) query.q = q
  if (kind !== undefined) query.kind = kind
  const minSize = optionalInt(params.minSize, 'minSize')
  const maxSize = optionalInt(params.maxSize, 'maxSize')
  if (minSize !== undefined) query.minSize = minSize
  if (maxSize !== undefined) query.maxSize = maxSize
  const after = optionalDate(params.after, 'after', false)
  const before = optionalDate(params.before, 'before', true)
  if (after !== undefined) query.after = after
  if (before !== undefined) query.before = before
  return query
}

function folderOf (value: string): string {
  // `.` is the repository root (a collection folder may be the root of a `files` collection).
  return value === '.' ? '.' : assertMediaPath(value.replace(/(?<!\/)\/+$/, ''))
}

function oneOf<T extends string> (value: string | undefined, field: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback
  if (!(allowed as readonly string[]).includes(value)) throw new BadRequestError(`${field} must be one of ${allowed.join(', ')}`, { field })
  return value as T
}

function int (value: string | undefined, field: string, fallback: number, min: number): number {
  const n = parseWholeNumber(value, fallback, min, 15)
  if (n === null) throw new BadRequestError(`${field} must be an integer of at least ${min}`, { field })
  return n
}

function optionalInt (value: string | undefined, field: string): number | undefined {
  return value === undefined || value === '' ? undefined : int(value, field, 0, 0)
}

/** A day (`YYYY-MM-DD`, UTC) or an ISO time; `before` a day means before the next day. */
function optionalDate (value: string | undefined, field: string, endOfDay: boolean): number | undefined {
  if (value === undefined || value === '') return undefined
  const day = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(value)
  const ms = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2}))?$/.test(value) ? Date.parse(value) : NaN
  if (Number.isNaN(ms)) throw new BadRequestError(`${field} must be a date (YYYY-MM-DD) or an ISO time`, { field })
  return day && endOfDay ? ms + 86_400_000 : ms
}
