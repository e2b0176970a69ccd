import { isEntityAddress } from '../../entity.js'
import { BOOTSTRAP_ROOT_KEY_ADDRESS } from '../../root-keys/root-key-entity.js'

/** A record as one change left it: what the webhook event of that change describes. */
export interface ChangeSnapshot {
  /** The record's stored document as the change wrote it; for a delete, as it was just before. */
  doc: Record<string, unknown>
  /** A key's credit balance right after the write (for a delete, just before); absent when it carries none. */
  credits?: number
  /** The id of the identity a key's externalId named at the write; absent without one. */
  identityId?: string
}

/**
 * Snapshots a shard keeps while no deriver reads past them (a lease hand-over, a deriver far behind), newest kept:
 * beyond it a change is described as its record then stands. Small, since a snapshot holds the whole record (meta up to
 * 64 KB), and the deriver normally forgets them within a look of their write.
 */
export const CHANGE_SNAPSHOTS_MAX_LEN = 256

/** Resolves an externalId to its identity's id at a key's write, for the snapshot. */
export type IdentityIdOf = (externalId: string) => Promise<string | undefined>

/**
 * The records as each change wrote them (`store.snapshots`), for the webhooks' deriver alone. Written by the writes of
 * keys and of the entities events describe (snapshotKept), in the same atomic step as the change itself: a crash
 * between a write and its derivation loses nothing, and an event describes its write, not what happened after. Kept
 * apart from the change log, which every verifier reads and which stays small; a shard's snapshots are capped
 * (CHANGE_SNAPSHOTS_MAX_LEN), dropped with the shard's revision counter (a new epoch), and forgotten once the deriver
 * has read past them.
 *
 * A change whose snapshot is gone (trimmed while no deriver ran, or written by a process that kept none) is absent from
 * what readSnapshots answers. Store failures throw `StoreUnavailableError`.
 */
export interface ChangeSnapshotStore {
  /** The snapshots of the shard's changes with afterRev < rev ≤ throughRev, by revision. */
  readSnapshots(shard: number, afterRev: number, throughRev: number): Promise<Map<number, ChangeSnapshot>>
  /** Forgets the shard's snapshots of changes with rev ≤ throughRev: the deriver has read past them. */
  forgetSnapshots(shard: number, throughRev: number): Promise<void>
}

/** Whether a write of this record keeps a snapshot: keys, identities and root keys, the records events describe. */
export function snapshotKept(hashOrAddress: string): boolean {
  if (!isEntityAddress(hashOrAddress)) return true
  if (hashOrAddress === BOOTSTRAP_ROOT_KEY_ADDRESS) return false
  return hashOrAddress.startsWith('identity:') || hashOrAddress.startsWith('rootkey:')
}
