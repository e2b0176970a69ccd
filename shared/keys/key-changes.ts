import { isDeepStrictEqual } from 'node:util'
import type { NewKeyRecord } from './records.js'

// Bookkeeping that every write changes, or that is the key's identity, or a portal roll's claim on the key (the roll is
// told by key.rerolled, and by the old key's expiry or deletion): never news of its own.
const NOT_CHANGES: ReadonlySet<string> = new Set(['rev', 'updatedAt', 'id', 'hash', 'apiId', 'createdAt', 'replacedBy'])

/**
 * The fields of a key record an update changed (KeyRecord names, sorted): what the change log keeps beside the
 * update, so that the webhooks' `key.updated` can say what changed without keeping copies of records.
 */
export function changedKeyFields(before: NewKeyRecord, after: NewKeyRecord): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...names]
    .filter((name) => !NOT_CHANGES.has(name))
    .filter(
      (name) =>
        !isDeepStrictEqual(
          (before as unknown as Record<string, unknown>)[name],
          (after as unknown as Record<string, unknown>)[name],
        ),
    )
    .sort()
}
