/** Every failure the service reports, each class with its HTTP status and a stable `code`. Imports nothing of ours. */

/** Extra members merged into the JSON error body next to `error`. */
type ErrorDetails = Record<string, unknown>

/** Base class: a failure with an HTTP status, a stable code and optional body details. */
export class CmsError extends Error {
  readonly status: number
  readonly code: string
  readonly details: ErrorDetails
  readonly headers: Record<string, string>

  constructor (status: number, code: string, message: string, details: ErrorDetails = {}, headers: Record<string, string> = {}) {
    super(message)
    this.name = new.target.name
    this.status = status
    this.code = code
    this.details = details
    this.headers = headers
  }
}

/** The class of a failure with a fixed status and code, made with a message and optional details. */
function errorKind (status: number, code: string): new (message: string, details?: ErrorDetails) => CmsError {
  return class extends CmsError {
    constructor (message: string, details: ErrorDetails = {}) {
      super(status, code, message, details)
    }
  }
}

/** 400: a malformed payload, a bad name or path, a wrong type. */
export class BadRequestError extends errorKind(400, 'bad_request') {}

/** One schema validation problem, as the spec shapes it. */
export interface ValidationIssue {
  path: string
  code: string
  message: string
}

/** 400: the write would add a schema validation issue. */
export class SchemaValidationError extends CmsError {
  readonly issues: ValidationIssue[]
  constructor (issues: ValidationIssue[]) {
    super(400, 'schema_validation', 'Entry does not match collection schema', { issues })
    this.issues = issues
  }
}

/** 401: no valid editor authentication. */
export class UnauthorizedError extends errorKind(401, 'unauthorized') {}

/** 403: the request-forgery header is missing. The body is fixed by the spec. */
export class MissingCsrfHeaderError extends CmsError {
  constructor () {
    super(403, 'csrf_header_missing', 'Missing required request header', {
      detail: 'Send the header x-cms-request: 1 on every mutating request (POST, PUT, PATCH, DELETE) to the CMS API.'
    })
  }
}

/** 403: authenticated, but not allowed to do this (policy, or a collection flag). */
export class ForbiddenError extends errorKind(403, 'forbidden') {}

/** 404: the entry, collection, snapshot or route does not exist. */
export class NotFoundError extends errorKind(404, 'not_found') {}

/** 409: `expectedRevision` does not match the stored revision. */
export class RevisionConflictError extends CmsError {
  readonly currentRevision: number
  constructor (currentRevision: number) {
    super(409, 'revision_conflict', 'Revision conflict', { currentRevision })
    this.currentRevision = currentRevision
  }
}

/** 409: a Markdown block's source hint no longer matches the body. */
export class StaleSourceError extends CmsError {
  constructor (currentRevision: number) {
    super(409, 'stale_source', 'Markdown source changed; render the page again for fresh source stamps', { currentRevision })
  }
}

/** 409: any other state conflict (collection exists, provider is authoritative, ...). */
export class ConflictError extends errorKind(409, 'conflict') {}

/** 413: the body or upload is larger than allowed. */
export class PayloadTooLargeError extends errorKind(413, 'payload_too_large') {}

/** 415: the body is not of an accepted type. */
export class UnsupportedMediaTypeError extends errorKind(415, 'unsupported_media_type') {}

/** 422: stored content cannot be read or decoded safely. */
export class UnreadableEntryError extends errorKind(422, 'unreadable_entry') {}

/** 422: an in-place edit cannot be placed exactly in the Markdown source (the reason says why). */
export class UnmappableEditError extends errorKind(422, 'unmappable_edit') {}

/** 422: a Markdown body is refused by the renderer's limits (length, time or memory); `error` says which. */
export class RenderRefusedError extends errorKind(422, 'render_refused') {}

/** 422: a request is within the body limit but over another documented limit (schema depth, collection count). */
export class LimitExceededError extends errorKind(422, 'limit_exceeded') {}

/** 422: a collection's definition (`.cms/collections/<name>.json`, arrived through git) is invalid or its schema does not compile. */
export class CollectionRefusedError extends errorKind(422, 'collection_refused') {}

/** 429: too many failed logins; carries `Retry-After` in seconds. */
export class RateLimitedError extends CmsError {
  constructor (retryAfterSeconds: number) {
    super(429, 'rate_limited', 'Too many failed sign-in attempts; try again later',
      { retryAfter: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) })
  }
}

/** 502: the site `serve --proxy` forwards to did not answer. */
export class BadGatewayError extends errorKind(502, 'bad_gateway') {}

/** 503: storage is unavailable or required draft support is missing. */
export class StorageUnavailableError extends errorKind(503, 'storage_unavailable') {}

/** 503: password sign-in is not possible because no password is configured. */
export class PasswordNotConfiguredError extends errorKind(503, 'password_not_configured') {}

/** A configuration problem found at start-up; `serve` prints it and exits non-zero. */
export class ConfigError extends Error {
  readonly code = 'config_invalid'
  readonly key: string
  constructor (key: string, reason: string) {
    super(`Invalid config: ${key}: ${reason}`)
    this.name = 'ConfigError'
    this.key = key
  }
}

/** A reason the service refuses to start, or `init` writes nothing (not a repository, a weak secret, a config there). */
export class StartupError extends Error {
  readonly code = 'startup_refused'
  constructor (message: string) {
    super(message)
    this.name = 'StartupError'
  }
}

/** 409: a media file that entries (or drafts) still reference; `references` lists them. */
export class MediaInUseError extends CmsError {
  constructor (path: string, references: unknown[], otherDrafts = 0) {
    super(409, 'media_in_use', 'Entries still reference this file; delete with force=true to remove it anyway', { path, references, otherDrafts })
  }
}
