import type { UsageIncrement } from '../analytics.js'
import type { ChangeEvent } from '../change-event.js'
import type { Spend } from '../credits.js'
import type { CounterOwner, ExactLimit, RateCounter } from '../ratelimit.js'
import type { KeyRecord } from '../records.js'
import type { StoreHealth } from './store-health.js'
import type { EntityReader, EntityStore } from './entity-store.js'
import type { NamespaceCounterStore } from './namespace-counter-store.js'

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
 * What the verifier asks of the store: records by hash, entities by address (entity-store.ts) and the name pointers
 * that find them by id (a namespace named by its id in v2's ratelimit.limit), whether its bound api exists, the
 * shard revisions and change logs it syncs from, and the shared counters (credits, exact rate limits, usage,
 * rate-limit namespaces' windows) a verdict may need. Nothing else: a verifier cannot create, list or delete
 * anything. The general contract is on KeyStore (key-store.ts).
 */
export interface VerifierStore extends StoreHealth, EntityReader, Pick<EntityStore, 'readName'>, NamespaceCounterStore {
  /** The verifier's miss path: one read in one shard. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>

  /**
   * The hash of every stored key, in batches (the verifier's filter of known hashes is built from it). A key stored
   * for the whole iteration is in it; one created or deleted meanwhile may or may not be (the change feed tells of
   * those), and a hash may come more than once. Reads the whole keyspace: at start-up and on rare rebuilds only.
   */
  scanKeyHashes(): AsyncIterable<string[]>

  /**
   * Whether the api exists (false for one being deleted, as for one never created): readiness of a verifier bound
   * to an api (--api-id), one read.
   */
  apiExists(apiId: string): Promise<boolean>

  /**
   * Spends `cost` credits of the key with this hash, atomically across every process (refilling first when
   * `refill` says a refill is due); null when the key carries no credits or is gone.
   */
  spendCredits(
    hash: string,
    cost: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
  ): Promise<Spend | null>

  /**
   * Exact fixed-window limits (async:false) of one call, all or nothing and atomic across every process:
   * charged only if each window has room for its cost. `failed` is the index of the first without room. Every
   * counter is in the slot of `group` (each limit's counter is its owner's: shared/ratelimit.ts).
   */
  consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }>
  /** Adds locally counted usage (async limits) to the window counter and returns its total (delta 0 reads it). */
  addRateLimitUsage(counter: RateCounter, delta: number): Promise<number>

  /**
   * Adds verification counts (batched by the verifiers); best effort, never on a verdict's path. `increments` is read
   * once, as the store sends them, and reading one consumes it: the verifier's recorder takes each key's counts from
   * its table only when it is read, so that none lives longer than the call that carries it (and so none is promoted
   * to V8's old generation). An increment read but not added is lost; a store that stops reading before the end (after
   * a failed call) rejects, and what it did not read stays with the caller.
   */
  addUsage(increments: Iterable<UsageIncrement>): Promise<void>

  /**
   * The store's instance and every shard's epoch and revision (rev 0, epoch '' where nothing was written), in one
   * round trip.
   */
  readRevisions(): Promise<RevisionSnapshot>
  /**
   * Changes of a shard with rev > afterRev, oldest first, contiguous from afterRev + 1, at most `limit`;
   * LOG_TRIMMED if the log no longer reaches back that far (or does not continue from there).
   */
  readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED>
}
