import type { IdentityRecord, NamedRateLimit } from '../identity.js'
import type { AppliedLimit, CounterOwner, RateLimitConfig } from '../ratelimits/ratelimit.js'

/** The name of a key's own `ratelimit` among named limits: Unkey's v1 stores it as the auto-applied `default`. */
export const DEFAULT_LIMIT = 'default'

/** A limit stored on the key or its identity, ready to apply: its owner and defaults resolved. */
export type StoredLimit = Omit<AppliedLimit, 'cost'>

/**
 * The rate limits a key's verifications may use, resolved once per key and identity (memoised with the key's
 * context, so a verification only looks names up): the key's own `ratelimit` (as `default`) and named limits, and
 * its identity's. A key's limit wins over its identity's of the same name.
 */
export interface KeyLimits {
  /** The slot group of every counter of the key's calls: its identity when it has one, else itself. */
  group: CounterOwner
  /** Who a limit defined by the request counts: the identity (all its keys) when the key has one, else the key. */
  adHocOwner: CounterOwner
  byName: ReadonlyMap<string, StoredLimit>
  /** Applied to every call at cost 1 (the key's own first), unless the request names them with another cost. */
  auto: readonly AppliedLimit[]
}

interface LimitSources {
  hash: string
  ratelimit?: RateLimitConfig
  ratelimits?: NamedRateLimit[]
}

/**
 * The key's limits, or undefined when it has none and no identity: such a key's verifications pay nothing for
 * named limits (a limit the request defines then counts the key, as the caller assumes).
 */
export function keyLimitsOf(key: LimitSources, identity: IdentityRecord | undefined): KeyLimits | undefined {
  if (key.ratelimit === undefined && key.ratelimits === undefined && identity === undefined) return undefined
  const byName = new Map<string, StoredLimit>()
  const autoApplied = new Set<string>()
  const add = (limit: NamedRateLimit, owner: CounterOwner) => {
    const { name, limit: max, duration } = limit
    // Named limits are exact unless asked otherwise: Unkey counts them so.
    const autoApply = limit.autoApply === true
    byName.set(name, { name, limit: max, duration, async: limit.async ?? false, owner, autoApply })
    if (autoApply) autoApplied.add(name)
    else autoApplied.delete(name)
  }
  if (key.ratelimit) {
    const { limit, duration } = key.ratelimit
    add({ name: DEFAULT_LIMIT, limit, duration, autoApply: true, async: key.ratelimit.async ?? true }, key.hash)
  }
  for (const limit of key.ratelimits ?? []) add(limit, key.hash)
  for (const limit of identity?.ratelimits ?? []) if (!byName.has(limit.name)) add(limit, identity!.id)
  const group = identity?.id ?? key.hash
  return {
    group,
    adHocOwner: group,
    byName,
    auto: Object.freeze([...autoApplied].map((name) => Object.freeze({ ...byName.get(name)!, cost: 1 }))),
  }
}
