/** The JSON Schemas and types of the mutate commands and of the history and publish bodies (validators generated at build). */
import type { JSONSchemaType } from 'ajv'
import type { TextMark } from '../api-shapes.js'

const name = { type: 'string', minLength: 1, maxLength: 200 } as const
/** An entry id: the grammar (up to 1,024 bytes) is checked by assertEntryId. */
const entryId = { type: 'string', minLength: 1, maxLength: 1024 } as const
const revision = { type: 'integer', minimum: 0, nullable: true } as const

export interface SaveFieldCommand { type: 'save_field', collection: string, id: string, field: string, value: unknown, expectedRevision?: number }
export interface PutEntryCommand { type: 'put_entry', collection: string, id: string, data: Record<string, unknown>, expectedRevision?: number }
export interface DeleteEntryCommand { type: 'delete_entry', collection: string, id: string, expectedRevision?: number }
export interface ReorderEntriesCommand { type: 'reorder_entries', collection: string, order: string[], expectedRevision?: number }
export interface UpdatePageLayoutCommand { type: 'update_page_layout', collection: string, id: string, layout: unknown[], expectedRevision?: number }
export interface MdBlockCommand { type: 'md_block', collection: string, id: string, blockPath: string, src: string, html: string, expectedRevision?: number }
export interface MdEditCommand {
  type: 'md_edit'
  collection: string
  id: string
  field: string
  src: string
  before: string
  after: string
  marks?: TextMark[]
  expectedRevision?: number
}
/** How a collection shows in the Studio (create_collection's `metadata`, and a config collection's keys). */
export interface CollectionMetadata {
  label?: string
  description?: string
  icon?: string
  creatable?: boolean
  orderable?: boolean
  deletable?: boolean
  singletonId?: string | null
  order?: number
}
export interface CreateCollectionCommand {
  type: 'create_collection'
  collection: string
  schema: Record<string, unknown>
  format?: 'json' | 'yaml' | 'md'
  metadata?: CollectionMetadata
  expectedRevision?: number
}
export interface DeleteCollectionCommand { type: 'delete_collection', collection: string, expectedRevision?: number }

export type MutateCommand =
  | SaveFieldCommand | PutEntryCommand | DeleteEntryCommand | ReorderEntriesCommand
  | UpdatePageLayoutCommand | MdBlockCommand | MdEditCommand | CreateCollectionCommand | DeleteCollectionCommand

export type CommandType = MutateCommand['type']

/* The `value` of save_field and the items of layout are any JSON value (ajv's `{}` schema). */
const anyValue = {}

/** A mutate command's schema: `type`, the fields, an optional `expectedRevision` (JSONSchemaType cannot type `unknown`). */
function command (type: CommandType, required: string[], properties: Record<string, object>): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['type', ...required],
    properties: { type: { type: 'string', const: type }, ...properties, expectedRevision: revision }
  }
}

/** The most characters of a block's DOM text md_edit takes (a block is a paragraph, not a page). */
const MAX_BLOCK_TEXT = 100000
/** The most marks one md_edit may apply. */
const MAX_MARKS = 32

export interface RestoreBody { collection: string, id: string, ts: number }
const restoreBody: JSONSchemaType<RestoreBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['collection', 'id', 'ts'],
  properties: { collection: name, id: entryId, ts: { type: 'integer', minimum: 0 } }
}

export interface PublishBody { collection?: string, id?: string, retryRebuild?: boolean, retryPush?: boolean }
const publishBody: JSONSchemaType<PublishBody> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  dependencies: { id: ['collection'] },
  properties: { collection: { ...name, nullable: true }, id: { ...entryId, nullable: true }, retryRebuild: { type: 'boolean', nullable: true }, retryPush: { type: 'boolean', nullable: true } }
}

/** Ajv's options for the command schemas, shared by the generated validators and a run-time compile. */
export const COMMAND_AJV_OPTIONS = { allErrors: false, strict: false } as const

/** The name of each command body's validator: a mutate command's type, `restore` or `publish`. */
export type CommandSchemaName = CommandType | 'restore' | 'publish'

/** Every command body's schema by its name. */
export const commandSchemas: Readonly<Record<CommandSchemaName, object>> = {
  save_field: command('save_field', ['collection', 'id', 'field', 'value'], { collection: name, id: entryId, field: { type: 'string', minLength: 1, maxLength: 1000 }, value: anyValue }),
  put_entry: command('put_entry', ['collection', 'id', 'data'], { collection: name, id: entryId, data: { type: 'object', required: [] } }),
  delete_entry: command('delete_entry', ['collection', 'id'], { collection: name, id: entryId }),
  reorder_entries: command('reorder_entries', ['collection', 'order'], { collection: name, order: { type: 'array', items: entryId, maxItems: 10000 } }),
  update_page_layout: command('update_page_layout', ['collection', 'id', 'layout'], { collection: name, id: entryId, layout: { type: 'array', items: anyValue } }),
  md_block: command('md_block', ['collection', 'id', 'blockPath', 'src', 'html'], {
    collection: name,
    id: entryId,
    blockPath: { type: 'string', minLength: 1, maxLength: 200 },
    src: { type: 'string', minLength: 1, maxLength: 100 },
    html: { type: 'string', maxLength: 200000 }
  }),
  md_edit: command('md_edit', ['collection', 'id', 'field', 'src', 'before', 'after'], {
    collection: name,
    id: entryId,
    field: { type: 'string', minLength: 1, maxLength: 200 },
    src: { type: 'string', minLength: 1, maxLength: 100 },
    before: { type: 'string', maxLength: MAX_BLOCK_TEXT },
    after: { type: 'string', maxLength: MAX_BLOCK_TEXT },
    marks: {
      type: 'array',
      nullable: true,
      maxItems: MAX_MARKS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'start', 'end'],
        properties: {
          type: { type: 'string', enum: ['strong', 'em', 'code', 'link'] },
          start: { type: 'integer', minimum: 0, maximum: MAX_BLOCK_TEXT },
          end: { type: 'integer', minimum: 0, maximum: MAX_BLOCK_TEXT },
          href: { type: 'string', nullable: true, minLength: 1, maxLength: 2048 }
        }
      }
    }
  }),
  create_collection: command('create_collection', ['collection', 'schema'], {
    collection: name,
    schema: { type: 'object', required: [] },
    format: { type: 'string', enum: ['json', 'yaml', 'md'], nullable: true },
    metadata: {
      type: 'object',
      nullable: true,
      additionalProperties: false,
      required: [],
      properties: {
        label: { type: 'string', nullable: true, maxLength: 200 },
        description: { type: 'string', nullable: true, maxLength: 2000 },
        icon: { type: 'string', nullable: true, maxLength: 200 },
        creatable: { type: 'boolean', nullable: true },
        orderable: { type: 'boolean', nullable: true },
        deletable: { type: 'boolean', nullable: true },
        singletonId: { type: 'string', nullable: true, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$' },
        order: { type: 'number', nullable: true }
      }
    }
  }),
  delete_collection: command('delete_collection', ['collection'], { collection: name }),
  restore: restoreBody,
  publish: publishBody
}
