/** The schema response of a collection, and the metadata list of dynamic collections. */
import { NotFoundError } from '../errors.js'
import { templateOf } from '../content/schema-tools.js'
import type { ContentStore } from '../storage/content-store.js'

/** `GET /schema`: a collection's schema, template, metadata and locales (default first); 404 without the collection. */
export async function readSchema (content: ContentStore, name: string): Promise<Record<string, unknown>> {
  const collection = await content.registry.get(name)
  if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
  const schema = await content.schemaOf(collection)
  const { i18n } = collection
  return {
    collection: name,
    source: collection.source,
    schema,
    template: templateOf(schema),
    metadata: collection.metadata,
    ...(i18n === null ? {} : { i18n: { locales: [...i18n.locales], layout: i18n.layout, rootLocale: i18n.rootLocale, prefixes: Object.fromEntries(i18n.prefixes) } })
  }
}

/** The dynamic collections' records (`GET /collections-metadata`). */
export async function listDynamicCollections (content: ContentStore): Promise<{ collections: Array<Record<string, unknown>> }> {
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
