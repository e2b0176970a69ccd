import type { CounterOwner, ExactLimit, RateCounter } from '../../ratelimits/ratelimit.js'

/**
 * Rate-limit window counters shared by every process (`store.counters`), one per fixed window, each outliving its
 * window by one duration, then gone. Two families, apart: the keys' limits (an owner's named limits, checked in
 * verifyKey; on Redis in the slot of the call's group) and the standalone rate-limit service's (ratelimits.limit:
 * one per namespace, identifier and duration; on Redis in the identifier's own slot). A charge is atomic across
 * every process; usage counted locally (async limits) is added later and may pass the limit.
 */
export interface CounterStore {
  /**
   * Exact fixed-window limits (async:false) of one call, all or nothing: charged only if each window has room for
   * its cost. `failed` is the index of the first without room. Every counter is in the slot of `group` (each limit's
   * counter is its owner's: shared/ratelimits/ratelimit.ts).
   */
  consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }>
  /** Adds locally counted usage (async limits) to the window counter and returns its total (delta 0 reads it). */
  addRateLimitUsage(counter: RateCounter, delta: number): Promise<number>

  /**
   * Charges `cost` to the namespace window only if it has room for it (usage + cost ≤ limit). `used` is the window's
   * usage after the call (unchanged when refused).
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
   * Adds locally counted usage (async calls) to a namespace window and returns its total (delta 0 reads it); a
   * negative delta gives back what a refused batch had charged (multiLimit).
   */
  addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number>
}
