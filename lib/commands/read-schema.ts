/** The schema response of a collection, and the metadata list of dynamic collections. */
import { NotFoundError } from '../errors.js'
import { templateOf, type JsonSchema } from '../content/schema-tools.js'
import type { ContentStore } from '../storage/content-store.js'
import type { CollectionMetadata, SchemaSource } from '../storage/collection-registry.js'

/** A collection's schema, template and metadata, as `GET /schema` answers. */
export interface SchemaResponse {
  collection: string
  source: SchemaSource
  schema: JsonSchema
  template: unknown
  metadata: CollectionMetadata
  /** A multilingual collection's locales (default first) and where each one's entries sit. */
  i18n?: { locales: string[], layout: 'folder' | 'suffix' | 'dirs', rootLocale: string | null, prefixes: Record<string, string> }
}

/** A dynamic collection record as `collections-metadata` lists it. */
export interface DynamicCollectionRecord extends Pick<CollectionMetadata, 'label' | 'icon' | 'creatable' | 'orderable' | 'deletable' | 'order'> {
  id: string
  schema: JsonSchema
  created_at: number
  updated_at: number
}

/** Reads a collection's schema, template and metadata (404 without the collection). */
export async function readSchema (content: ContentStore, name: string): Promise<SchemaResponse> {
  const collection = await content.registry.get(name)
  if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
  const schema = await content.schemaOf(collection)
  const response: SchemaResponse = { collection: name, source: collection.source, schema, template: templateOf(schema), metadata: collection.metadata }
  const i18n = collection.i18n
  if (i18n !== null) response.i18n = { locales: [...i18n.locales], layout: i18n.layout, rootLocale: i18n.rootLocale, prefixes: Object.fromEntries(i18n.prefixes) }
  return response
}

/** The dynamic collections' records. */
export async function listDynamicCollections (content: ContentStore): Promise<{ collections: DynamicCollectionRecord[] }> {
  const list = await content.registry.listDynamic()
  return {
    collections: list.map(c => ({
      id: c.name,
      label: c.metadata.label,
      icon: c.metadata.icon,
      creatable: c.metadata.creatable,
      orderable: c.metadata.orderable,
      deletable: c.metadata.deletable,
      order: c.metadata.order,
      schema: c.schema ?? {},
      created_at: c.createdAt ?? 0,
      updated_at: c.updatedAt ?? 0
    }))
  }
}
