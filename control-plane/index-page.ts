import type { EntityStore } from '../shared/store/entities/entity-store.js'

/** One page of records: `cursor` (the last id on it) only when another record follows, so the last has none. */
export interface RecordPage<T> {
  records: T[]
  cursor?: string
}

export interface PageOptions {
  /** The `cursor` of the page before; none for the first page. */
  cursor?: string
  limit: number
}

/**
 * A page of the records an index lists (in id order, which is creation order, after `cursor`), skipping pointers
 * to nothing and the records `keep` refuses. It reads on until one more kept record turns up or the index ends, so
 * a cursor comes back only when there is more: a client that pages while a cursor comes back (Unkey's SDK) never
 * asks for an empty page.
 */
export async function pageThroughIndex<T>(
  store: Pick<EntityStore, 'listIndex'>,
  index: string,
  options: PageOptions,
  load: (id: string) => Promise<T | null>,
  keep: (record: T) => boolean = () => true,
): Promise<RecordPage<T>> {
  const records: T[] = []
  let last: string | undefined
  let cursor = options.cursor
  for (;;) {
    const chunk = await store.listIndex(index, { cursor, limit: options.limit + 1 })
    const found = await Promise.all(chunk.members.map(load))
    for (const [i, record] of found.entries()) {
      if (record === null || !keep(record)) continue
      if (records.length === options.limit) return { records, cursor: last }
      records.push(record)
      last = chunk.members[i]
    }
    if (chunk.cursor === undefined) return { records }
    cursor = chunk.cursor
  }
}

/** Whether any of `fields` contains `search`, ignoring case (Unkey's list `search`); a blank search keeps all. */
export function searchFor(search: string | undefined): (fields: readonly (string | undefined)[]) => boolean {
  const needle = search?.trim().toLowerCase()
  if (!needle) return () => true
  return (fields) => fields.some((field) => field?.toLowerCase().includes(needle))
}
