/** Loads and validates `cms.config.*` (at most one of yaml, yml, json, mjs, js) into one frozen `Config` with its defaults. */
import { SchemaCompiler, errorPath, type JsonSchema } from './content/schema-tools.js'
import { readFile, lstat } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { parseYamlText } from './content/yaml-text.js'
import { ConfigError } from './errors.js'
import { CONFIG_AJV_OPTIONS, configSchema } from './config-schema.js'
import { CONFIG_SCHEMA_DIGEST, validateConfigSchema } from './config-shape.generated.js'
import { generatedOrCompiled } from './content/generated-validators.js'
import { FORMAT_EXTENSIONS, type EntryFormat } from './content/formats.js'
import { isReservedKey } from './content/reserved-keys.js'
import { COLLECTION_NAME } from './storage/names.js'
import type { CollectionMetadata } from './content/command-schema-table.js'

export type AuthAction = 'edit' | 'publish' | 'delete' | 'manage_collections' | 'upload'

/** An identity as the spec shapes it. */
export interface Identity {
  id: string
  name: string
  roles: string[]
}

/** The adapter a site supplies in `cms.config.mjs` for an external identity provider. */
export interface AuthAdapter {
  authenticate: (request: import('node:http').IncomingMessage) => Promise<Identity | null> | Identity | null
  loginUrl: (opts: { redirectTo: string }) => string
  logoutUrl: (opts: { redirectTo: string }) => string
  authorize?: (args: { identity: Identity, action: AuthAction, collection?: string, id?: string }) => boolean | Promise<boolean>
}

/** The built-in provider for a reverse proxy that strips and sets identity headers. */
export interface TrustedHeaderAuth {
  provider: 'trusted-header'
  idHeader: string
  nameHeader?: string
  rolesHeader?: string
  loginUrl?: string
  logoutUrl?: string
}

/** One collection definition as written in the config, before defaults. */
export interface CollectionDefinition extends CollectionMetadata {
  format?: EntryFormat
  /** The collection's folder relative to the repository root (default `<contentDir>/<name>`). */
  folder?: string
  /** Files in subfolders are entries too (id = path below `folder`). */
  nested?: boolean
  /** A folder holding `<indexFile>.<ext>` is one entry (a page bundle) whose id is the folder's path. */
  indexFile?: 'index' | '_index'
  /** The frontmatter kind of Markdown files the service creates. */
  frontmatter?: 'yaml' | 'toml' | 'json'
  /** Single files (relative to the repository) forming the collection; id = file name without extension. */
  files?: string[]
  /** Where uploads for this collection go, and their URL prefix (defaults: the top-level keys). */
  uploadsDir?: string
  uploadsUrl?: string
  /** The address the site gives each entry, e.g. `/posts/{slug}/` (placeholders: lib/http/page-match-url.ts). */
  url?: string
  schema?: JsonSchema
  titleField?: string
  orderField?: string
  layoutField?: string
  /** Fields shown as sortable columns of the Studio's list (`id`, `title` or schema properties). */
  listFields?: string[]
  /** The collection's translations (CONTRACT section 15). */
  i18n?: I18nDefinition
}

/** A collection's `i18n` key as written. */
export interface I18nDefinition {
  /** Default locale first. */
  locales: string[]
  /** Default `folder`. */
  layout?: 'folder' | 'suffix' | 'dirs'
  /** folder: the locale whose files sit at the collection's root. */
  rootLocale?: string
  /** dirs: each locale's folder, relative to the repository. */
  folders?: Record<string, string>
}

/** The config as a site writes it: every key optional. */
export interface ConfigInput {
  apiBasePath?: string
  mountPath?: string
  enableAdmin?: boolean
  enableInlineEditor?: boolean
  contentDir?: string
  uploadsDir?: string
  uploadsUrl?: string
  uploads?: { maxBytes?: number, types?: UploadType[] }
  collections?: Record<string, CollectionDefinition>
  delivery?: {
    publish?: { webhookUrl: string, method?: 'POST' | 'PUT', deploymentId?: string, secret?: string }
    status?: { url: string, target?: string }
  }
  auth?: AuthAdapter | TrustedHeaderAuth
  permissions?: Record<string, Array<AuthAction | '*'>>
  git?: { remote?: string, branch?: string, pushOnPublish?: boolean, pushRefs?: boolean, pullInterval?: number, syncSecret?: string }
  metrics?: { enabled?: boolean, token?: string }
  preview?: { stylesheets?: string[] }
}

/** The file types an upload may have. */
export type UploadType = 'png' | 'jpeg' | 'gif' | 'webp' | 'avif' | 'pdf'

/** The validated config with defaults filled in. */
export interface Config extends Required<Pick<ConfigInput, 'apiBasePath' | 'mountPath' | 'enableAdmin' | 'enableInlineEditor' | 'contentDir' | 'uploadsDir' | 'uploadsUrl'>> {
  uploads: { maxBytes: number, types: UploadType[] }
  collections: Record<string, CollectionDefinition>
  delivery: ConfigInput['delivery'] & object
  auth: AuthAdapter | TrustedHeaderAuth | null
  permissions: Record<string, Array<AuthAction | '*'>> | null
  /** The git remote settings (CONTRACT 13): `remote` null is local only, `branch` null the checked-out one, `pullInterval` 0 no fetches. */
  git: { remote: string | null, branch: string | null, pushOnPublish: boolean, pushRefs: boolean, pullInterval: number, syncSecret: string | null }
  /** `GET /metrics` (CONTRACT 18): off unless enabled; with a token, only for `Bearer <token>`. */
  metrics: { enabled: boolean, token: string | null }
  /** The Studio's body preview (CONTRACT 16): the site's own stylesheets, as paths on the site. */
  preview: { stylesheets: readonly string[] }
}

let check: ValidateFunction | null = null

/** The config shape validator, made once per process (the generated one saves ajv's 20-40 ms compile of every start). */
export function configShapeCheck (): ValidateFunction {
  check ??= generatedOrCompiled(CONFIG_SCHEMA_DIGEST, validateConfigSchema as ValidateFunction, configSchema, CONFIG_AJV_OPTIONS, ajv => ajv.compile(configSchema))
  return check
}

/** The config file names, of which a repository holds at most one. */
const CONFIG_FILES = ['cms.config.yaml', 'cms.config.yml', 'cms.config.json', 'cms.config.mjs', 'cms.config.js'] as const

/**
 * The config files a repository holds. A link named like one counts, even a dangling one: it is
 * refused when read, never taken for "no config".
 * @param repoDir the repository's root
 * @returns the names present, in CONFIG_FILES order
 */
export async function existingConfigFiles (repoDir: string): Promise<string[]> {
  const found = await Promise.all(CONFIG_FILES.map(async name => await lstat(path.join(repoDir, name))
    .then(() => name, (err: NodeJS.ErrnoException) => err.code === 'ENOENT' ? null : name)))
  return found.filter(name => name !== null)
}

/** The repository's config file, loaded (undefined or null when there is none, or it is empty). */
async function readConfigFile (repoDir: string): Promise<unknown> {
  const present = await existingConfigFiles(repoDir)
  if (present.length > 1) throw new ConfigError('(file)', `only one config file may exist, found ${present.join(', ')}`)
  const file = present[0]
  if (file === undefined) return undefined
  const full = path.join(repoDir, file)
  try {
    if (file.endsWith('.mjs') || file.endsWith('.js')) return (await import(pathToFileURL(full).href) as { default?: unknown }).default
    const text = await readFile(full, 'utf8')
    return file.endsWith('.json') ? JSON.parse(text) as unknown : parseYamlText(text)
  } catch (err) {
    throw new ConfigError(file, `cannot be read: ${(err as Error).message.split('\n')[0]}`)
  }
}

/** Validates a raw config and fills in the defaults (its collection schemas are compiled by `checkCollectionSchemas`). */
export function normalizeConfig (input: unknown): Config {
  const validateConfigShape = configShapeCheck()
  if (!validateConfigShape(input)) {
    const err = validateConfigShape.errors?.[0]
    const key = err === undefined ? '' : errorPath(err)
    // A collection key refused by the schema's propertyNames: named with the folder key that reads that folder.
    const name = key === 'collections' ? (err as { propertyName?: string }).propertyName : undefined
    if (name !== undefined) throw new ConfigError(`collections.${name}`, `a collection name must match ${COLLECTION_NAME.source} (use folder: ${name} to read that folder)`)
    throw new ConfigError(key === '' ? '(root)' : key, reasonOf(err))
  }
  const c = input as ConfigInput
  checkAuth(c.auth)
  const ownPrefixes = [c.apiBasePath ?? '/api/cms', c.mountPath ?? '/admin', '/__cms'].map(trimSlash)
  c.preview?.stylesheets?.forEach((href, i) => { checkStylesheet(`preview.stylesheets.${i}`, href, ownPrefixes) })
  for (const [name, def] of Object.entries(c.collections ?? {})) {
    checkCollectionPaths(name, def)
    checkListFields(name, def)
    checkI18n(name, def, trimSlash(c.contentDir ?? 'content'))
  }
  const config: Config = {
    apiBasePath: trimSlash(c.apiBasePath ?? '/api/cms'),
    mountPath: trimSlash(c.mountPath ?? '/admin'),
    enableAdmin: c.enableAdmin ?? true,
    enableInlineEditor: c.enableInlineEditor ?? true,
    contentDir: trimSlash(c.contentDir ?? 'content'),
    uploadsDir: trimSlash(c.uploadsDir ?? 'public/uploads'),
    uploadsUrl: trimSlash(c.uploadsUrl ?? '/uploads'),
    uploads: {
      maxBytes: c.uploads?.maxBytes ?? 10 * 1024 * 1024,
      types: c.uploads?.types ?? ['png', 'jpeg', 'gif', 'webp', 'avif', 'pdf']
    },
    collections: c.collections ?? {},
    delivery: c.delivery ?? {},
    auth: c.auth ?? null,
    permissions: c.permissions ?? null,
    git: Object.freeze({
      remote: c.git?.remote ?? null,
      branch: c.git?.branch ?? null,
      pushOnPublish: c.git?.pushOnPublish ?? c.git?.remote !== undefined,
      pushRefs: c.git?.pushRefs ?? c.git?.remote !== undefined,
      pullInterval: c.git?.pullInterval ?? 60,
      syncSecret: c.git?.syncSecret ?? null
    }),
    metrics: Object.freeze({ enabled: c.metrics?.enabled ?? false, token: c.metrics?.token ?? null }),
    preview: Object.freeze({ stylesheets: Object.freeze([...(c.preview?.stylesheets ?? [])]) })
  }
  return Object.freeze(config)
}

/** Loads, validates and fills in the config of a repository (`override` replaces the file), compiling its collection schemas. */
export async function loadConfig (repoDir: string, override?: ConfigInput): Promise<Config> {
  const config = await loadConfigShape(repoDir, override)
  const schemas = new SchemaCompiler()
  await checkCollectionSchemas(config, schema => schemas.validator(schema))
  return config
}

/** `loadConfig` without compiling the collection schemas (the service does in its schema thread: `checkCollectionSchemas`). */
export async function loadConfigShape (repoDir: string, override?: ConfigInput): Promise<Config> {
  return normalizeConfig(override ?? (await readConfigFile(repoDir)) ?? {})
}

/**
 * Refuses a config whose collection schema does not compile, with the compiler the service
 * validates entries with (formats known, 2020-12 by `$schema`).
 * @param config a normalized config
 * @param compile compiles one schema; throws or rejects when it does not compile
 * @returns resolves when every schema compiled; rejects with a ConfigError naming the first that did not
 */
export async function checkCollectionSchemas (config: Config, compile: (schema: JsonSchema) => unknown): Promise<void> {
  // All asked at once; the first refused in config order is named.
  const checks = await Promise.allSettled(Object.entries(config.collections).map(async ([name, def]) => {
    if (def.schema === undefined) return
    try { await compile(def.schema) } catch (err) {
      throw new ConfigError(`collections.${name}.schema`, `is not a valid JSON Schema: ${(err as Error).message}`)
    }
  }))
  for (const check of checks) if (check.status === 'rejected') throw check.reason
}

/** `listFields` names `id`, `title` or properties of the config's schema (an inferred one is known only later). */
function checkListFields (name: string, def: CollectionDefinition): void {
  if (def.listFields === undefined) return
  const props = def.schema?.properties
  for (const [i, field] of def.listFields.entries()) {
    const key = `collections.${name}.listFields.${i}`
    if (isReservedKey(field)) throw new ConfigError(key, `${JSON.stringify(field)} is not a field name`)
    if (field === 'id' || field === 'title' || def.schema === undefined) continue
    if (props === null || typeof props !== 'object' || !Object.hasOwn(props, field)) {
      const known = ['id', 'title', ...Object.keys(props ?? {})]
      throw new ConfigError(key, `${JSON.stringify(field)} is not a field of the collection's schema (known: ${[...new Set(known)].join(', ')})`)
    }
  }
}

/** `i18n`: the root locale is a locale; `folder` and `dirs` need nested or bundle entries; no `files`. */
function checkI18n (name: string, def: CollectionDefinition, contentDir: string): void {
  const i18n = def.i18n
  if (i18n === undefined) return
  const key = `collections.${name}.i18n`
  const layout = i18n.layout ?? 'folder'
  if (def.files !== undefined) throw new ConfigError(key, 'cannot be combined with files')
  if (i18n.rootLocale !== undefined && !i18n.locales.includes(i18n.rootLocale)) {
    throw new ConfigError(`${key}.rootLocale`, `${JSON.stringify(i18n.rootLocale)} is not one of the locales`)
  }
  if (layout !== 'suffix' && def.nested !== true && def.indexFile === undefined) {
    throw new ConfigError(`${key}.layout`, `${JSON.stringify(layout)} puts locales in folders: the collection needs nested: true or indexFile`)
  }
  if (layout !== 'dirs' && i18n.folders !== undefined) throw new ConfigError(`${key}.folders`, 'is only for layout: dirs')
  if (layout === 'suffix' && i18n.rootLocale !== undefined) throw new ConfigError(`${key}.rootLocale`, 'is not for layout: suffix (files without a suffix are the first locale)')
  if (layout !== 'dirs') return
  if (i18n.folders === undefined || Object.keys(i18n.folders).length === 0) throw new ConfigError(`${key}.folders`, 'is required with layout: dirs')
  const collectionFolder = (def.folder ?? `${contentDir}/${name}`).replace(/\/+$/, '')
  for (const [locale, folder] of Object.entries(i18n.folders)) {
    if (!i18n.locales.includes(locale)) throw new ConfigError(`${key}.folders.${locale}`, 'is not one of the locales')
    checkRepoPath(`${key}.folders.${locale}`, folder)
    const rel = path.posix.relative(collectionFolder, folder.replace(/\/+$/, ''))
    if (rel.startsWith('..') || path.posix.isAbsolute(rel)) {
      throw new ConfigError(`${key}.folders.${locale}`, `${JSON.stringify(folder)} must be inside the collection's folder ${JSON.stringify(collectionFolder)}`)
    }
  }
}

/** Folders and files of a collection stay inside the repository, never under `.git/`. */
function checkCollectionPaths (name: string, def: CollectionDefinition): void {
  const key = `collections.${name}`
  if (def.folder !== undefined) checkRepoPath(`${key}.folder`, def.folder)
  if (def.uploadsDir !== undefined) checkRepoPath(`${key}.uploadsDir`, def.uploadsDir)
  if ((def.uploadsDir === undefined) !== (def.uploadsUrl === undefined)) {
    throw new ConfigError(`${key}.${def.uploadsDir === undefined ? 'uploadsDir' : 'uploadsUrl'}`, 'is required with ' + (def.uploadsDir === undefined ? 'uploadsUrl' : 'uploadsDir'))
  }
  if (def.files !== undefined) {
    const ids = new Set<string>()
    for (const [i, file] of def.files.entries()) {
      checkRepoPath(`${key}.files.${i}`, file)
      const base = path.posix.basename(file)
      const ext = path.posix.extname(base)
      if (ext === '' || !Object.values(FORMAT_EXTENSIONS).some(exts => exts.includes(ext))) {
        throw new ConfigError(`${key}.files.${i}`, `${JSON.stringify(file)} must end with one of ${Object.values(FORMAT_EXTENSIONS).flat().join(', ')}`)
      }
      const id = base.slice(0, -ext.length)
      if (ids.has(id)) throw new ConfigError(`${key}.files.${i}`, `two files give the entry id ${JSON.stringify(id)}`)
      ids.add(id)
    }
    if (def.nested === true || def.indexFile !== undefined || def.folder !== undefined) {
      throw new ConfigError(`${key}.files`, 'cannot be combined with folder, nested or indexFile')
    }
  }
}

/** A repository-relative path: `/`-separated, no `.` or `..` segment, not under `.git`, no control characters. */
function checkRepoPath (key: string, value: string): void {
  const bad = (reason: string): never => { throw new ConfigError(key, `${JSON.stringify(value)} ${reason}`) }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(value)) bad('holds a control character or a backslash')
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) bad('must be relative to the repository root')
  const segments = value.replace(/\/+$/, '').split('/')
  if (value !== '.' && segments.some(s => s === '' || s === '.' || s === '..')) bad('must not hold empty, . or .. segments')
  if (segments[0]?.toLowerCase() === '.git') bad('must not be under .git')
}

/** A `preview.stylesheets` path: on the site (one leading `/`), plain characters, none of git-cms's own addresses. */
function checkStylesheet (key: string, value: string, ownPrefixes: string[]): void {
  const bad = (reason: string): never => { throw new ConfigError(key, `${JSON.stringify(value)} ${reason}`) }
  if (!value.startsWith('/') || value.startsWith('//')) bad('must be a path on the site, starting with a single / (no scheme, no other host)')
  if (!/^\/[A-Za-z0-9/_.~+-]*(\?[A-Za-z0-9_.~+=&-]*)?$/.test(value)) bad('may hold only letters, digits and / _ . ~ + - (then an optional ?query)')
  const segments = value.split('?')[0]!.split('/').slice(1)
  if (segments.some(s => s === '.' || s === '..' || s === '')) bad('must not hold empty, . or .. segments')
  const own = ownPrefixes.find(p => p !== '/' && (value === p || value.startsWith(p + '/') || value.startsWith(p + '?')))
  if (own !== undefined) bad(`is under git-cms's own ${own}, not the site's`)
}

function checkAuth (auth: unknown): void {
  if (auth === undefined) return
  const a = auth as Record<string, unknown>
  if (a.provider === 'trusted-header') {
    if (typeof a.idHeader !== 'string' || a.idHeader === '') throw new ConfigError('auth.idHeader', 'must be a non-empty string')
    for (const k of ['nameHeader', 'rolesHeader', 'loginUrl', 'logoutUrl']) {
      if (a[k] !== undefined && typeof a[k] !== 'string') throw new ConfigError(`auth.${k}`, 'must be a string')
    }
    return
  }
  for (const k of ['authenticate', 'loginUrl', 'logoutUrl']) {
    if (typeof a[k] !== 'function') throw new ConfigError(`auth.${k}`, "must be a function (or use provider: 'trusted-header')")
  }
  if (a.authorize !== undefined && typeof a.authorize !== 'function') throw new ConfigError('auth.authorize', 'must be a function')
}

function reasonOf (err: ErrorObject | undefined): string {
  if (err === undefined) return 'is invalid'
  if (err.keyword === 'additionalProperties') return 'is not a known key'
  if (err.keyword === 'required') return 'is required'
  if (err.keyword === 'enum') return `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.map(v => JSON.stringify(v)).join(', ')}`
  return err.message ?? 'is invalid'
}

function trimSlash (s: string): string {
  return s.length > 1 ? s.replace(/\/+$/, '') : s
}
