import type { Bucket, Granularity, UsageIncrement } from '../../analytics.js'

/**
 * Verification counts per key (`store.usage`): hourly and daily buckets of outcomes, kept for
 * ANALYTICS_RETENTION_MS. Best effort: never on a verdict's path.
 */
export interface UsageStore {
  /**
   * Adds verification counts (batched by the verifiers). `increments` is read once, as the store sends them, and
   * reading one consumes it: the verifier's recorder takes each key's counts from its table only when it is read, so
   * that none lives longer than the call that carries it (and so none is promoted to V8's old generation). An
   * increment read but not added is lost; a store that stops reading before the end (after a failed call) rejects,
   * and what it did not read stays with the caller.
   */
  addUsage(increments: Iterable<UsageIncrement>): Promise<void>
  /**
   * Buckets of a key between two times (inclusive of the bucket containing `from`), oldest first, only those with
   * counts.
   */
  readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]>
}
