import type { Redis } from 'ioredis'
import { windowStart, type CounterOwner, type ExactLimit, type RateCounter } from '../../ratelimits/ratelimit.js'
import type { CounterStore } from './counter-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { CONSUME_RATE_LIMITS_SCRIPT } from '../redis/redis-scripts.js'
import { storeCall } from '../redis/redis-store-call.js'

// One window: charged only if it has room, so that concurrent calls on every process never pass the limit together.
const CONSUME_NAMESPACE_LIMIT_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[2])
if used + cost > tonumber(ARGV[1]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], cost)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, used}
`

interface CounterScripts {
  consumeRateLimits(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>
  consumeNamespaceLimit(counter: string, limit: number, cost: number, ttlMs: number): Promise<[number, number]>
}

/**
 * The rate-limit windows on Redis: one STRING counter per window, a key's in its call's group slot (redis-keys.ts
 * `rateWindow`), a namespace's in its identifier's own (`namespaceWindow`).
 */
export class RedisCounterStore implements CounterStore {
  private readonly redis: Redis & CounterScripts

  constructor(redis: RedisClient) {
    // Called with the number of keys first: one call checks several windows.
    redis.defineCommand('consumeRateLimits', { lua: CONSUME_RATE_LIMITS_SCRIPT })
    redis.defineCommand('consumeNamespaceLimit', { numberOfKeys: 1, lua: CONSUME_NAMESPACE_LIMIT_SCRIPT })
    this.redis = redis as unknown as Redis & CounterScripts
  }

  async consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }> {
    const keys = limits.map((l) =>
      redisKeys.rateWindow(group, l.owner, l.name, l.duration, windowStart(l.duration, nowMs)),
    )
    const args = limits.flatMap((l) => [l.limit, l.cost, l.duration * 2])
    const [failed, ...used] = await storeCall(() => this.redis.consumeRateLimits(keys.length, ...keys, ...args))
    return { failed: failed ? failed - 1 : undefined, used }
  }

  async addRateLimitUsage({ group, owner, name, duration, window }: RateCounter, delta: number): Promise<number> {
    return this.add(redisKeys.rateWindow(group, owner, name, duration, window), duration, delta)
  }

  async consumeNamespaceLimit(
    namespace: string,
    identifier: string,
    limit: number,
    duration: number,
    cost: number,
    nowMs: number,
  ): Promise<{ ok: boolean; used: number }> {
    const counter = redisKeys.namespaceWindow(namespace, identifier, duration, windowStart(duration, nowMs))
    const [ok, used] = await storeCall(() => this.redis.consumeNamespaceLimit(counter, limit, cost, duration * 2))
    return { ok: ok === 1, used }
  }

  async addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number> {
    return this.add(redisKeys.namespaceWindow(namespace, identifier, duration, window), duration, delta)
  }

  /** Adds to a window's counter, which lives one duration past its window; answers the total. */
  private async add(counter: string, duration: number, delta: number): Promise<number> {
    const [total] = await storeCall(() =>
      Promise.all([this.redis.incrby(counter, delta), this.redis.pexpire(counter, duration * 2)]),
    )
    return total
  }
}
