import type { Bucket, Granularity } from '../analytics.js'
import type { AuditEntry, NewAuditEntry } from '../audit.js'
import type { ChangeEvent } from '../change-event.js'
import type { CreditOp } from '../credits.js'
import type { ApiRecord, KeyPatch, KeyRecord, NewKeyRecord } from '../records.js'
import type { RootKeyStore } from './root-key-store.js'
import type { EntityStore } from './entity-store.js'
import type { StoreHealth } from './store-health.js'

export interface KeyPage {
  keys: KeyRecord[]
  /**
   * Keys of the whole api, even when the page is filtered by owner (as Unkey's listKeys counts); may count pointers
   * whose record a crashed write left missing.
   */
  total: number
  /** Where the next page starts; absent when the index holds nothing after this page. */
  cursor?: string
}

export interface KeyWrite {
  record: KeyRecord
  event: ChangeEvent
  /** The write is durable and logged, but Redis refused to publish it: verifiers learn of it from the log. */
  publishFailed?: boolean
}

/**
 * What the control plane asks of the store: apis, keys, entities (entity-store.ts), root keys (root-key-store.ts),
 * credits, usage reads and the audit log. The general contract (absence, atomicity, revisions, errors) is on
 * KeyStore (key-store.ts).
 */
export interface ManagementStore extends StoreHealth, RootKeyStore, EntityStore {
  createApi(api: ApiRecord): Promise<void>
  getApi(apiId: string): Promise<ApiRecord | null>
  /** Marks the api deleting (absent to readers from now on); returns it, or null if there was none. */
  markApiDeleting(apiId: string): Promise<ApiRecord | null>
  /** Whether the api exists, including one that is being deleted. */
  apiExistsOrDeleting(apiId: string): Promise<'exists' | 'deleting' | 'absent'>
  /** Removes the api record and its indexes; call after every key of it is deleted. */
  removeApi(apiId: string): Promise<void>

  /** Creates the key; false if a key with the same hash already exists (nothing written). */
  createKey(record: NewKeyRecord): Promise<KeyWrite | false>
  getKeyById(keyId: string): Promise<KeyRecord | null>
  /** keys.whoami: the record of a key given in full. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>
  /** Applies the patch if the record is still at `expectedRev`; null if the key is gone. */
  updateKey(keyId: string, patch: KeyPatch, expectedRev: number, nowMs: number): Promise<KeyWrite | null>
  /** Deletes the key and its indexes; null if it was not there. */
  deleteKey(keyId: string): Promise<KeyWrite | null>
  /**
   * Keys of an api sorted by id, after `cursor` (an id, exclusive); cost proportional to `limit`. `cursor`
   * in the answer is set when the page is full (or the scan stopped early), never on the last page.
   */
  listKeys(apiId: string, options: { cursor?: string; limit: number; ownerId?: string }): Promise<KeyPage>

  /**
   * Changes a key's balance (capped at MAX_CREDITS), applying a refill that is due first; `take` empties it
   * and returns what it held. Null when the key carries no credits or is gone.
   */
  updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
  ): Promise<number | null>

  /**
   * Buckets of a key between two times (inclusive of the bucket containing `from`), oldest first, only those with
   * counts.
   */
  readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]>

  /** Appends to the capped audit log. */
  appendAudit(entry: NewAuditEntry): Promise<void>
  /** Audit entries newest first, after `cursor` (an entry id, exclusive): none after `0-0`, the first id there is. */
  listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]>
}
