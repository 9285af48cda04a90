/** git-cms: the public surface of the package. Re-exports only. */
export { createCms } from './cms.js'
export type { Cms, CreateCmsOptions } from './cms.js'
export { loadConfig } from './config.js'
export type { Config, ConfigInput, CollectionDefinition, Identity, AuthAdapter, TrustedHeaderAuth, AuthAction } from './config.js'
export { renderMarkdown, remarkCmsSource, rehypeCmsSource, sourceHash, parseSourceHint } from './content/markdown/index.js'
export type { RenderMarkdownOptions, CmsSourceOptions } from './content/markdown/index.js'
export {
  CmsError,
  BadRequestError,
  SchemaValidationError,
  UnauthorizedError,
  MissingCsrfHeaderError,
  ForbiddenError,
  NotFoundError,
  RevisionConflictError,
  StaleSourceError,
  ConflictError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  UnreadableEntryError,
  RateLimitedError,
  StorageUnavailableError,
  ConfigError,
  StartupError,
  MediaInUseError
} from './errors.js'
export type { ValidationIssue } from './errors.js'
