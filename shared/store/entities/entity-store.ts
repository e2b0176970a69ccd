import type { ChangeEvent } from '../../change-event.js'
import type { StoredEntity } from '../../entity.js'

/** A write to an entity: its new revision and the change it logged and published. */
export interface EntityWrite {
  rev: number
  event: ChangeEvent
  /** The write is durable and logged, but Redis refused to publish it: verifiers learn of it from the log. */
  publishFailed?: boolean
}

/** Why a conditional entity write wrote nothing. */
export type EntityWriteRefused = 'exists' | 'missing' | 'conflict'

/** A page of an index: members in order after the cursor, the cursor to go on from (absent on the last page). */
export interface IndexPage {
  members: string[]
  total: number
  cursor?: string
}

/** What a verifier reads of entities: one record by address (one read in one shard), and names' pointers. */
export interface EntityReader {
  getEntity<T>(address: string): Promise<StoredEntity<T> | null>
  /** The value a unique name points at (a namespace's name by its id, in v2's ratelimit.limit), or null. */
  readName(scope: string, name: string): Promise<string | null>
}

/**
 * Entities (shared/entity.ts), `store.entities`: records written through the shard mechanism, and the
 * pointers beside them — indexes to list them and unique names to find them — which, like the keys' indexes,
 * never decide a verdict and are written before the record (so a crash leaves a pointer readers skip, never a
 * record nothing points at).
 */
export interface EntityStore extends EntityReader {
  /**
   * Writes the record: `created` only if there is none, `updated` only if there is one (at `expectedRev` when
   * given), `deleted` removes it. Atomic with its revision bump, log append and publish, as a key's write.
   */
  writeEntity(
    address: string,
    id: string,
    kind: 'created' | 'updated' | 'deleted',
    doc: unknown,
    expectedRev?: number,
  ): Promise<EntityWrite | EntityWriteRefused>

  /** Sorted-set indexes by member (ids sort by creation time). */
  addToIndex(index: string, member: string): Promise<void>
  removeFromIndex(index: string, member: string): Promise<void>
  listIndex(index: string, options: { cursor?: string; limit: number }): Promise<IndexPage>

  /** A unique name → value pointer. Returns the value already there (the name is taken), or null (now claimed). */
  claimName(scope: string, name: string, value: string): Promise<string | null>
  /** Moves a name from `from` to `to` only if it still points at `from` (a dangling claim taken over). */
  replaceName(scope: string, name: string, from: string, to: string): Promise<boolean>
  /** Releases the name if it still points at `value`. */
  releaseName(scope: string, name: string, value: string): Promise<void>
}
