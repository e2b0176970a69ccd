import { LRUCache } from 'lru-cache'
import type { Clock } from '../shared/clock.js'
import type {
  NamespaceLimitOutcome,
  NamespaceLimitRequest,
  NamespaceLimits,
} from '../shared/ratelimits/namespace-limits.js'
import type { LimitOutcome } from '../shared/ratelimits/ratelimit.js'
import {
  isNamespaceId,
  NAMESPACE_ID_SCOPE,
  namespaceAddress,
  overrideAddress,
  overrideFor,
  type NamespaceRecord,
  type OverrideRecord,
  type WildcardRule,
} from '../shared/ratelimits/ratelimit-namespace.js'
import type { EntityReader } from '../shared/store/entities/entity-store.js'
import type { NamespaceLimiter } from './namespace-limiter.js'
import type { AnalyticsRecorder } from '../shared/analytics/analytics-recorder.js'

/** Entities as verdicts see them (KeyVerifier.entity): cached, absences too, current within the revocation bound. */
export interface EntitySource {
  entity<T>(address: string): T | null | Promise<T | null>
}

/**
 * ratelimits.limit's core (shared/ratelimits/namespace-limits.ts) on a verifier's entity cache: the namespace record
 * (its wildcard overrides inside) and the identifier's exact override are read like a key's roles, so an override set
 * or deleted reaches every verifier within the bound, and a namespace or override that does not exist costs no store
 * read once known.
 */
export class NamespaceRatelimits implements NamespaceLimits {
  /** Namespace ids → names found: a pointer that led to its record never changes (NAMESPACE_ID_SCOPE). */
  private readonly namesById = new LRUCache<string, string>({ max: 10_000 })

  /** `ids`: the namespace id → name pointers, for v2's calls that name a namespace by its id. */
  constructor(
    private readonly entities: EntitySource,
    private readonly limiter: NamespaceLimiter,
    private readonly clock: Clock,
    private readonly ids: Pick<EntityReader, 'readName'>,
    /** Where each decision is recorded for analytics. */
    private readonly recorder?: Pick<AnalyticsRecorder, 'recordRatelimit'>,
  ) {}

  async namespace(name: string): Promise<NamespaceRecord | null> {
    return this.entities.entity<NamespaceRecord>(namespaceAddress(name))
  }

  async find(nameOrId: string): Promise<NamespaceRecord | null> {
    const named = await this.namespace(nameOrId)
    if (named || !isNamespaceId(nameOrId)) return named
    const name = this.namesById.get(nameOrId) ?? (await this.ids.readName(NAMESPACE_ID_SCOPE, nameOrId))
    if (name === null) return null
    const namespace = await this.namespace(name)
    // A pointer left by a create that lost a race names a record with another id.
    if (namespace?.id !== nameOrId) return null
    this.namesById.set(nameOrId, name)
    return namespace
  }

  async limit(request: NamespaceLimitRequest): Promise<NamespaceLimitOutcome> {
    const started = performance.now()
    const rule = await this.overrideOf(request)
    const now = this.clock.now()
    const outcome = await this.limiter.check(applied(request, rule), now)
    this.record(request, outcome, now, started)
    return withOverride(outcome, rule)
  }

  async limitAll(requests: readonly NamespaceLimitRequest[]): Promise<NamespaceLimitOutcome[]> {
    const started = performance.now()
    const rules = await Promise.all(requests.map((request) => this.overrideOf(request)))
    const now = this.clock.now()
    const outcomes = await this.limiter.checkAll(
      requests.map((request, i) => applied(request, rules[i])),
      now,
    )
    // All or nothing: when one window had no room none passed, whatever its own room.
    const passed = outcomes.every((outcome) => outcome.ok)
    outcomes.forEach((outcome, i) => this.record(requests[i]!, { ...outcome, ok: passed }, now, started))
    return outcomes.map((outcome, i) => withOverride(outcome, rules[i]))
  }

  private record(request: NamespaceLimitRequest, outcome: LimitOutcome, now: number, started: number): void {
    this.recorder?.recordRatelimit(
      request.namespace,
      request.identifier,
      outcome.ok,
      outcome.limit,
      outcome.remaining,
      now,
      performance.now() - started,
    )
  }

  private async overrideOf(request: NamespaceLimitRequest): Promise<WildcardRule | undefined> {
    const namespace = await this.namespace(request.namespace)
    // No namespace, no overrides: a namespace used only through verifiers has no record until one is set.
    const exact =
      namespace && (await this.entities.entity<OverrideRecord>(overrideAddress(namespace.id, request.identifier)))
    return overrideFor(request.identifier, exact, namespace)
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

const applied = (request: NamespaceLimitRequest, rule: WildcardRule | undefined): NamespaceLimitRequest =>
  rule ? { ...request, limit: rule.limit, duration: rule.duration, async: rule.async } : request

const withOverride = (outcome: LimitOutcome, rule: WildcardRule | undefined): NamespaceLimitOutcome =>
  rule ? { ...outcome, overrideId: rule.id } : outcome
