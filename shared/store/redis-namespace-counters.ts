import type { Cluster, Redis } from 'ioredis'
import { windowStart } from '../ratelimit.js'
import type { NamespaceCounterStore } from './namespace-counter-store.js'
import { toStoreError } from './redis-connection.js'
import { redisKeys } from './redis-keys.js'

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
  consumeNamespaceLimit(counter: string, limit: number, cost: number, ttlMs: number): Promise<[number, number]>
}

/** The namespace counters on Redis: one STRING per window (redis-keys.ts `namespaceWindow`). */
export class RedisNamespaceCounters implements NamespaceCounterStore {
  private readonly redis: Redis & CounterScripts

  constructor(redis: Redis | Cluster) {
    redis.defineCommand('consumeNamespaceLimit', { numberOfKeys: 1, lua: CONSUME_NAMESPACE_LIMIT_SCRIPT })
    this.redis = redis as unknown as Redis & CounterScripts
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
    const [ok, used] = await this.run(() => this.redis.consumeNamespaceLimit(counter, limit, cost, duration * 2))
    return { ok: ok === 1, used }
  }

  async addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number> {
    const counter = redisKeys.namespaceWindow(namespace, identifier, duration, window)
    const [total] = await this.run(() =>
      Promise.all([this.redis.incrby(counter, delta), this.redis.pexpire(counter, duration * 2)]),
    )
    return total
  }

  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation()
    } catch (err) {
      throw toStoreError(err)
    }
  }
}
