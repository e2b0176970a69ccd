import type { ManagementStore } from './management-store.js'
import type { VerifierStore } from './verifier-store.js'

export type { KeyPage, KeyWrite, ManagementStore } from './management-store.js'
export { LOG_TRIMMED, type RevisionSnapshot, type ShardRevision, type VerifierStore } from './verifier-store.js'

/**
 * Where Keygate keeps apis, keys and root keys. The store is the truth; caches and events are hints. Each
 * process depends only on its side: the verifier on VerifierStore, the control plane on ManagementStore;
 * every implementation (memory-key-store.ts, redis-key-store.ts) is both, and whoever opened it closes it.
 *
 * Contract (the suite in test/integration/key-store.contract.ts runs it against every implementation):
 * - Absence is `null` (or `false`), never an exception. Deleted apis, and apis being deleted, are absent.
 * - Every write that can change a verdict is atomic per record: it bumps the record's shard revision, stores
 *   that revision on the record, appends the change to the shard's capped log and publishes it on the change
 *   feed, all as one step, and returns the event. A write that throws changed nothing.
 * - Revisions are per shard (`shardOf(hash)`), start at 1 and only grow.
 * - Store failures throw `StoreUnavailableError`; a lost compare-and-set throws `WriteConflictError`.
 * - Lookups by key id and per-api indexes never decide a verdict: they point at records, and a pointer whose
 *   record is gone is skipped (and cleaned up once old enough to not be a write in flight).
 */
export interface KeyStore extends VerifierStore, ManagementStore {
  close(): Promise<void>
}
