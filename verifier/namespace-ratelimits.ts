import type { Clock } from '../shared/clock.js'
import type { NamespaceLimitRequest, NamespaceLimits } from '../shared/namespace-limits.js'
import type { LimitOutcome } from '../shared/ratelimit.js'
import {
  namespaceAddress,
  overrideAddress,
  overrideFor,
  type NamespaceRecord,
  type OverrideRecord,
} from '../shared/ratelimit-namespace.js'
import type { NamespaceLimiter } from './namespace-limiter.js'

/** Entities as verdicts see them (KeyVerifier.entity): cached, absences too, current within the revocation bound. */
export interface EntitySource {
  entity<T>(address: string): T | null | Promise<T | null>
}

/**
 * ratelimits.limit's core (shared/namespace-limits.ts) on a verifier's entity cache: the namespace record (its
 * wildcard overrides inside) and the identifier's exact override are read like a key's roles, so an override set
 * or deleted reaches every verifier within the bound, and a namespace or override that does not exist costs no
 * store read once known.
 */
export class NamespaceRatelimits implements NamespaceLimits {
  constructor(
    private readonly entities: EntitySource,
    private readonly limiter: NamespaceLimiter,
    private readonly clock: Clock,
  ) {}

  async namespace(name: string): Promise<NamespaceRecord | null> {
    return this.entities.entity<NamespaceRecord>(namespaceAddress(name))
  }

  async limit(request: NamespaceLimitRequest): Promise<LimitOutcome> {
    const namespace = await this.namespace(request.namespace)
    // No namespace, no overrides: a namespace used only through verifiers has no record until one is set.
    const exact =
      namespace && (await this.entities.entity<OverrideRecord>(overrideAddress(namespace.id, request.identifier)))
    const rule = overrideFor(request.identifier, exact, namespace)
    const applied = rule ? { ...request, limit: rule.limit, duration: rule.duration, async: rule.async } : request
    return this.limiter.check(applied, this.clock.now())
  }

  start(): void {
    this.limiter.start()
  }

  /** Hands the usage counted in memory over to the store: before the store closes. */
  stop(): Promise<void> {
    return this.limiter.stop()
  }

  /** Reconciles async counts with the store now (tests; otherwise every poll interval). */
  reconcile(): Promise<void> {
    return this.limiter.reconcile(this.clock.now())
  }
}
