import { LRUCache } from 'lru-cache'
import { windowStart, type CounterOwner, type ExactLimit, type RateCounter } from '../../ratelimits/ratelimit.js'
import type { CounterStore } from './counter-store.js'

/**
 * The rate-limit windows in process memory; each family bounded, so that old windows cannot pile up in a long-running
 * process.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly rateWindows = new LRUCache<string, number>({ max: 100_000 })
  private readonly namespaceWindows = new LRUCache<string, number>({ max: 100_000 })

  async consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }> {
    const counters = limits.map((l) =>
      counterId({ group, owner: l.owner, name: l.name, duration: l.duration, window: windowStart(l.duration, nowMs) }),
    )
    const used = counters.map((counter) => this.rateWindows.get(counter) ?? 0)
    const failed = limits.findIndex((l, i) => used[i]! + l.cost > l.limit)
    if (failed >= 0) return { failed, used }
    counters.forEach((counter, i) => this.rateWindows.set(counter, used[i]! + limits[i]!.cost))
    return { failed: undefined, used: used.map((u, i) => u + limits[i]!.cost) }
  }

  async addRateLimitUsage(counter: RateCounter, delta: number): Promise<number> {
    return add(this.rateWindows, counterId(counter), delta)
  }

  async consumeNamespaceLimit(
    namespace: string,
    identifier: string,
    limit: number,
    duration: number,
    cost: number,
    nowMs: number,
  ): Promise<{ ok: boolean; used: number }> {
    const counter = namespaceCounterId(namespace, identifier, duration, windowStart(duration, nowMs))
    const used = this.namespaceWindows.get(counter) ?? 0
    if (used + cost > limit) return { ok: false, used }
    this.namespaceWindows.set(counter, used + cost)
    return { ok: true, used: used + cost }
  }

  async addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number> {
    return add(this.namespaceWindows, namespaceCounterId(namespace, identifier, duration, window), delta)
  }
}

function add(windows: LRUCache<string, number>, counter: string, delta: number): number {
  const total = (windows.get(counter) ?? 0) + delta
  windows.set(counter, total)
  return total
}

// As on Redis: the group is part of a counter's identity, and the name (any characters) comes last.
const counterId = ({ group, owner, name, duration, window }: RateCounter) =>
  `${group} ${owner} ${duration} ${window} ${name}`

// JSON keeps any namespace and identifier apart, whatever characters they hold.
const namespaceCounterId = (namespace: string, identifier: string, duration: number, window: number) =>
  JSON.stringify([namespace, identifier, duration, window])
