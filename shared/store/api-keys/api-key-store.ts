import type { ChangeEvent } from '../../change-event.js'
import type { CreditNotice } from '../../keys/credit-notice.js'
import type { CreditOp, Spend } from '../../keys/credits.js'
import type { ApiRecord, KeyPatch, KeyRecord, NewKeyRecord } from '../../keys/records.js'

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
 * Apis and their keys, with each key's credit balance (`store.keys`). A key is a record in its hash's shard: every
 * write of one bumps the shard's revision, stores that revision on the record, appends the change to the shard's
 * log (read through ChangeLogStore) and publishes it, as one step, and returns the event. Lookups by key id and the
 * per-api and per-owner indexes never decide a verdict: they point at records, and a pointer whose record is gone is
 * skipped (and cleaned up once old enough to not be a write in flight). Deleted apis, and apis being deleted, are
 * absent.
 */
export interface ApiKeyStore {
  createApi(api: ApiRecord): Promise<void>
  getApi(apiId: string): Promise<ApiRecord | null>
  /**
   * Whether the api exists (false for one being deleted, as for one never created): readiness of a verifier bound
   * to an api (--api-id), one read.
   */
  apiExists(apiId: string): Promise<boolean>
  /** Marks the api deleting (absent to readers from now on); returns it, or null if there was none. */
  markApiDeleting(apiId: string): Promise<ApiRecord | null>
  /** Whether the api exists, including one that is being deleted. */
  apiExistsOrDeleting(apiId: string): Promise<'exists' | 'deleting' | 'absent'>
  /** Removes the api record and its indexes; call after every key of it is deleted. */
  removeApi(apiId: string): Promise<void>

  /** Creates the key; false if a key with the same hash already exists (nothing written). */
  createKey(record: NewKeyRecord): Promise<KeyWrite | false>
  getKeyById(keyId: string): Promise<KeyRecord | null>
  /** The verifier's miss path (and keys.whoami): one read in one shard. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>
  /**
   * The hash of every stored key, in batches (the verifier's filter of known hashes is built from it). A key stored
   * for the whole iteration is in it; one created or deleted meanwhile may or may not be (the change feed tells of
   * those), and a hash may come more than once. Reads the whole keyspace: at start-up and on rare rebuilds only.
   */
  scanKeyHashes(): AsyncIterable<string[]>
  /** Applies the patch if the record is still at `expectedRev` (else WriteConflictError); null if the key is gone. */
  updateKey(keyId: string, patch: KeyPatch, expectedRev: number, nowMs: number): Promise<KeyWrite | null>
  /** Deletes the key and its indexes; null if it was not there. */
  deleteKey(keyId: string): Promise<KeyWrite | null>
  /**
   * Keys of an api sorted by id, after `cursor` (an id, exclusive); cost proportional to `limit`. `cursor`
   * in the answer is set when the page is full (or the scan stopped early), never on the last page.
   */
  listKeys(apiId: string, options: { cursor?: string; limit: number; ownerId?: string }): Promise<KeyPage>

  /**
   * Spends `cost` credits of the key with this hash, atomically across every process (refilling first when
   * `refill` says a refill is due); null when the key carries no credits or is gone. With `notice`, a spend that
   * crosses the key's threshold or empties it logs a credit notice in the same step (shared/keys/credit-notice.ts).
   */
  spendCredits(
    hash: string,
    cost: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
    notice?: CreditNotice,
  ): Promise<Spend | null>
  /**
   * Changes a key's balance (capped at MAX_CREDITS), applying a refill that is due first; `take` empties it
   * and returns what it held. Null when the key carries no credits or is gone. With `notice`, as spendCredits.
   */
  updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
    notice?: CreditNotice,
  ): Promise<number | null>
}
