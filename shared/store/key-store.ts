import type { Bucket, Granularity, UsageIncrement } from '../analytics.js'
import type { AuditEntry, NewAuditEntry } from '../audit.js'
import type { ChangeEvent } from '../change-event.js'
import type { ExactLimit } from '../ratelimit.js'
import type { CreditOp, Spend } from '../credits.js'
import type { ApiRecord, KeyPatch, KeyRecord, NewKeyRecord, RootKeyRecord } from '../records.js'

export interface KeyPage {
  keys: KeyRecord[]
  /** Keys in the index (may count pointers whose record a crashed write left missing). */
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

/** Where a shard's revision sequence stands: its epoch ('' before the first write) and last revision. */
export interface ShardRevision {
  epoch: string
  rev: number
}

export interface RevisionSnapshot {
  /**
   * Identity of the running store (Redis: the server's run_id). It changes on every restart or failover,
   * the only ways data can be rolled back to an older state that epochs and revisions cannot tell apart.
   */
  instance: string
  shards: ShardRevision[]
}

/** A shard's change log has been trimmed past the position a reader asked for: it cannot be replayed. */
export const LOG_TRIMMED = 'trimmed' as const

/**
 * Where Keygate keeps apis, keys and root keys. The store is the truth; caches and events are hints.
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
export interface KeyStore {
  /** `redis` or `memory`, for liveness answers and logs. */
  readonly kind: 'redis' | 'memory'

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
  /** The verifier's miss path: one read in one shard. */
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
   * Spends `cost` credits of the key with this hash, atomically across every process (refilling first when
   * `refill` says a refill is due); null when the key carries no credits or is gone.
   */
  spendCredits(hash: string, cost: number, refill: { boundary: number; amount: number } | undefined, nowMs: number): Promise<Spend | null>
  /**
   * Changes a key's balance (capped at MAX_CREDITS), applying a refill that is due first; `take` empties it
   * and returns what it held. Null when the key carries no credits or is gone.
   */
  updateCredits(keyId: string, op: CreditOp, value: number, refill: { boundary: number; amount: number } | undefined, nowMs: number): Promise<number | null>

  /**
   * Exact fixed-window limits (async:false) of one call, all or nothing and atomic across every process:
   * charged only if each window has room for its cost. `failed` is the index of the first without room.
   */
  consumeRateLimits(hash: string, limits: readonly ExactLimit[], nowMs: number): Promise<{ failed: number | undefined; used: number[] }>
  /** Adds locally counted usage (async limits) to the window counter and returns its total (delta 0 reads it). */
  addRateLimitUsage(hash: string, name: string, duration: number, window: number, delta: number): Promise<number>

  /** Adds verification counts (batched by the verifiers); best effort, never on a verdict's path. */
  addUsage(increments: UsageIncrement[]): Promise<void>
  /** Buckets of a key between two times (inclusive of the bucket containing `from`), oldest first, only those with counts. */
  readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]>

  /** Appends to the capped audit log. */
  appendAudit(entry: NewAuditEntry): Promise<void>
  /** Audit entries newest first, after `cursor` (an entry id, exclusive). */
  listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]>

  createRootKey(record: RootKeyRecord): Promise<void>
  getRootKeyByHash(hash: string): Promise<RootKeyRecord | null>

  /** The store's instance and every shard's epoch and revision (rev 0, epoch '' where nothing was written), in one round trip. */
  readRevisions(): Promise<RevisionSnapshot>
  /**
   * Changes of a shard with rev > afterRev, oldest first, contiguous from afterRev + 1, at most `limit`;
   * LOG_TRIMMED if the log no longer reaches back that far (or does not continue from there).
   */
  readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED>

  /** Throws StoreUnavailableError when the store cannot serve. */
  ping(): Promise<void>
  close(): Promise<void>
}
