import { isEntityAddress } from '../entity.js'

/** A record as one change left it: what the webhook event of that change describes. */
export interface ChangeSnapshot {
  /** The record's stored document as the change wrote it; for a delete, as it was just before. */
  doc: Record<string, unknown>
  /** A key's credit balance right after the write (for a delete, just before); absent when it carries none. */
  credits?: number
}

/**
 * The records as each change wrote them (`store.snapshots`), for the webhooks' deriver alone. Written by the writes of
 * keys and of the entities events describe (snapshotKept), in the same atomic step as the change itself: a crash
 * between a write and its derivation loses nothing, and an event describes its write, not what happened after. Kept
 * apart from the change log, which every verifier reads and which stays small; a shard's snapshots are capped as its
 * log is, and forgotten once the deriver has read past them.
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
  return (
    !isEntityAddress(hashOrAddress) || hashOrAddress.startsWith('identity:') || hashOrAddress.startsWith('rootkey:')
  )
}
