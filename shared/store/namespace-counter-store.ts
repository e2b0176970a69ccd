/**
 * The window counters of the standalone rate-limit service (ratelimits.limit): one per namespace, identifier,
 * duration and fixed window (shared/ratelimit.ts), each on its own (on Redis: in the identifier's own slot), apart
 * from the keys' counters. A window's counter outlives its window by one duration, then goes.
 */
export interface NamespaceCounterStore {
  /**
   * Charges `cost` to the current window only if it has room for it (usage + cost ≤ limit), atomically across
   * every process. `used` is the window's usage after the call (unchanged when refused).
   */
  consumeNamespaceLimit(
    namespace: string,
    identifier: string,
    limit: number,
    duration: number,
    cost: number,
    nowMs: number,
  ): Promise<{ ok: boolean; used: number }>
  /**
   * Adds locally counted usage (async calls) to a window and returns its total (delta 0 reads it); a negative delta
   * gives back what a refused batch had charged (multiLimit).
   */
  addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number>
}
