import type { CounterPage, HourCounter, UsageCounterStore } from './usage-counter-store.js'

/**
 * The memory store's counters: none survive a process, so a memory store starts with none to move unless given some
 * (the contract test gives them, as a Redis store would hold them).
 */
export class MemoryUsageCounterStore implements UsageCounterStore {
  private readonly counters: Map<string, HourCounter>

  constructor(counters: readonly HourCounter[] = []) {
    this.counters = new Map(counters.map((counter) => [`${counter.keyId} ${counter.hour}`, { ...counter }]))
  }

  async readCounters(cursor: string | undefined): Promise<CounterPage> {
    const entries = [...this.counters.keys()].sort()
    const from = cursor === undefined ? 0 : Number(cursor)
    const page = entries.slice(from, from + PAGE)
    return {
      counters: page.map((entry) => ({ ...this.counters.get(entry)! })),
      entries: page,
      cursor: from + PAGE < entries.length ? String(from + PAGE) : undefined,
    }
  }

  async dropCounters(entries: readonly string[]): Promise<void> {
    for (const entry of entries) this.counters.delete(entry)
  }
}

const PAGE = 1_000
