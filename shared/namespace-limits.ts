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

/**
 * The standalone rate-limit service's core, one for the verifier's and the control plane's ratelimits.limit: the
 * namespace's overrides applied (as the verifier knows them, within the revocation bound), then the identifier's
 * window counted — exactly across every process unless the call (or its override) is async.
 */
export interface NamespaceLimits {
  /** The namespace named so, or null when there is none (yet). */
  namespace(name: string): Promise<NamespaceRecord | null>
  /** Counts the call; `ok` says whether it may go on. The limit answered is the override's when one applies. */
  limit(request: NamespaceLimitRequest): Promise<LimitOutcome>
}
