import type { LimitOutcome } from './ratelimit.js'
import type { NamespaceRecord } from './ratelimit-namespace.js'

/** One ratelimits.limit call, defaults applied: `cost` units of `identifier`'s window in `namespace`. */
export interface NamespaceLimitRequest {
  namespace: string
  identifier: string
  limit: number
  duration: number
  cost: number
  async: boolean
}

/** What a call got: the window's state, and the override that set its limit, if one did (v2's `overrideId`). */
export interface NamespaceLimitOutcome extends LimitOutcome {
  overrideId?: string
}

/**
 * The standalone rate-limit service's core, one for the verifier's and the control plane's ratelimits.limit: the
 * namespace's overrides applied (as the verifier knows them, within the revocation bound), then the identifier's
 * window counted — exactly across every process unless the call (or its override) is async.
 */
export interface NamespaceLimits {
  /** The namespace named so, or null when there is none (yet). */
  namespace(name: string): Promise<NamespaceRecord | null>
  /** The namespace named so, else the one with this id (v2 names a namespace either way), or null. */
  find(nameOrId: string): Promise<NamespaceRecord | null>
  /** Counts the call; `ok` says whether it may go on. The limit answered is the override's when one applies. */
  limit(request: NamespaceLimitRequest): Promise<NamespaceLimitOutcome>
  /**
   * Counts several calls as one, all or nothing (v2's multiLimit): every window is charged only if each has room.
   * One outcome per call, in order: `ok` says whether that window had room; when one had none, nothing is charged
   * and `remaining` is each window's without this batch.
   */
  limitAll(requests: readonly NamespaceLimitRequest[]): Promise<NamespaceLimitOutcome[]>
}
