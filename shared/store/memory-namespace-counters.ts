import { LRUCache } from 'lru-cache'
import { windowStart } from '../ratelimit.js'
import type { NamespaceCounterStore } from './namespace-counter-store.js'

/** The namespace counters in process memory; bounded, so that old windows cannot pile up in a long-running process. */
export class MemoryNamespaceCounters implements NamespaceCounterStore {
  private readonly windows = new LRUCache<string, number>({ max: 100_000 })

  async consumeNamespaceLimit(
    namespace: string,
    identifier: string,
    limit: number,
    duration: number,
    cost: number,
    nowMs: number,
  ): Promise<{ ok: boolean; used: number }> {
    const counter = counterOf(namespace, identifier, duration, windowStart(duration, nowMs))
    const used = this.windows.get(counter) ?? 0
    if (used + cost > limit) return { ok: false, used }
    this.windows.set(counter, used + cost)
    return { ok: true, used: used + cost }
  }

  async addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number> {
    const counter = counterOf(namespace, identifier, duration, window)
    const total = (this.windows.get(counter) ?? 0) + delta
    this.windows.set(counter, total)
    return total
  }
}

// JSON keeps any namespace and identifier apart, whatever characters they hold.
const counterOf = (namespace: string, identifier: string, duration: number, window: number) =>
  JSON.stringify([namespace, identifier, duration, window])
