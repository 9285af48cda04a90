/** The JSON Schema of `cms.config.*`: a wrong key or type is reported by name before the service starts. */
import { LOCALE_PATTERN } from './content/i18n-layout.js'
import { COLLECTION_NAME } from './storage/names.js'

/** An object schema that refuses unknown keys. */
function closed (properties: Record<string, object>, required?: string[]): object {
  return { type: 'object', additionalProperties: false, ...(required === undefined ? {} : { required }), properties }
}

const collectionSchema = closed({
  format: { enum: ['json', 'yaml', 'md', 'mdx', 'toml'] },
  folder: { type: 'string', minLength: 1, maxLength: 1024 },
  nested: { type: 'boolean' },
  indexFile: { enum: ['index', '_index'] },
  frontmatter: { enum: ['yaml', 'toml', 'json'] },
  files: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 1024 } },
  uploadsDir: { type: 'string', minLength: 1, maxLength: 1024 },
  uploadsUrl: { type: 'string', pattern: '^/[A-Za-z0-9/_.-]*$' },
  url: { type: 'string', maxLength: 1024, pattern: '^/[^\\s{}?#]*(\\{(id|slug|year|month|day)\\}[^\\s{}?#]*)*$' },
  schema: { type: 'object' },
  label: { type: 'string' },
  description: { type: 'string' },
  icon: { type: 'string' },
  creatable: { type: 'boolean' },
  orderable: { type: 'boolean' },
  deletable: { type: 'boolean' },
  singletonId: { type: ['string', 'null'], pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$' },
  order: { type: 'number' },
  titleField: { type: 'string', minLength: 1 },
  orderField: { type: 'string', minLength: 1 },
  layoutField: { type: 'string', minLength: 1 },
  listFields: { type: 'array', maxItems: 12, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 128 } },
  i18n: closed({
    locales: { type: 'array', minItems: 1, maxItems: 200, uniqueItems: true, items: { type: 'string', pattern: LOCALE_PATTERN } },
    layout: { enum: ['folder', 'suffix', 'dirs'] },
    rootLocale: { type: 'string', pattern: LOCALE_PATTERN },
    folders: {
      type: 'object',
      propertyNames: { pattern: LOCALE_PATTERN },
      additionalProperties: { type: 'string', minLength: 1, maxLength: 1024 }
    }
  }, ['locales'])
})

const pathPrefix = { type: 'string', pattern: '^/[A-Za-z0-9/_.-]*$' } as const
const relativeDir = { type: 'string', minLength: 1, pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$))[A-Za-z0-9/_.-]+$' } as const

/** The schema of the whole config file. */
export const configSchema = closed({
  apiBasePath: pathPrefix,
  mountPath: pathPrefix,
  enableAdmin: { type: 'boolean' },
  enableInlineEditor: { type: 'boolean' },
  contentDir: relativeDir,
  uploadsDir: relativeDir,
  uploadsUrl: pathPrefix,
  uploads: closed({
    maxBytes: { type: 'integer', minimum: 1 },
    types: {
      type: 'array',
      items: { enum: ['png', 'jpeg', 'gif', 'webp', 'avif', 'pdf'] },
      uniqueItems: true
    }
  }),
  collections: {
    type: 'object',
    propertyNames: { pattern: COLLECTION_NAME.source },
    additionalProperties: collectionSchema
  },
  delivery: closed({
    publish: closed({
      webhookUrl: { type: 'string', pattern: '^https?://' },
      method: { enum: ['POST', 'PUT'] },
      deploymentId: { type: 'string' },
      secret: { type: 'string', minLength: 1 }
    }, ['webhookUrl']),
    status: closed({
      url: { type: 'string', pattern: '^https?://' },
      target: { type: 'string' }
    }, ['url'])
  }),
  auth: { type: 'object' },
  git: closed({
    remote: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' },
    branch: { type: 'string', pattern: '^(?!-)(?!.*\\.\\.)(?!.*//)[A-Za-z0-9/_.-]{1,200}(?<![./])$' },
    pushOnPublish: { type: 'boolean' },
    pushRefs: { type: 'boolean' },
    pullInterval: { type: 'integer', minimum: 0, maximum: 86400 },
    syncSecret: { type: 'string', minLength: 16 }
  }),
  preview: closed({
    stylesheets: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 1024 } }
  }),
  metrics: closed({
    enabled: { type: 'boolean' },
    token: { type: 'string', minLength: 16, maxLength: 1024 }
  }),
  permissions: {
    type: 'object',
    additionalProperties: {
      type: 'array',
      items: { enum: ['*', 'edit', 'publish', 'delete', 'manage_collections', 'upload'] }
    }
  }
})

/** Ajv's options for the config schema (our own, tested: no meta-schema check, no code optimization). */
export const CONFIG_AJV_OPTIONS = { allErrors: false, strict: false, validateSchema: false, code: { optimize: false } } as const
