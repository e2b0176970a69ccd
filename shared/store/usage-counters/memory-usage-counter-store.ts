import type { CounterMove, CounterPage, HourCounter, UsageCounterStore } from './usage-counter-store.js'

/**
 * The memory store's counters: none survive a process, so a memory store starts with none to move unless given some
 * (the contract test gives them, as a Redis store would hold them). Pages are in entry order; a cursor is the last
 * entry a page held, so entries dropped meanwhile move no later one out of its page.
 */
export class MemoryUsageCounterStore implements UsageCounterStore {
  private readonly counters: Map<string, HourCounter>
  private move: CounterMove | undefined

  constructor(counters: readonly HourCounter[] = []) {
    this.counters = new Map(counters.map((counter) => [`${counter.keyId} ${counter.hour}`, { ...counter }]))
  }

  async readCounters(cursor: string | undefined): Promise<CounterPage> {
    const after = [...this.counters.keys()].sort().filter((entry) => cursor === undefined || entry > cursor)
    const page = after.slice(0, PAGE)
    return {
      counters: page.map((entry) => ({ ...this.counters.get(entry)! })),
      entries: page,
      cursor: after.length > PAGE ? page.at(-1) : undefined,
    }
  }

  async dropCounters(entries: readonly string[]): Promise<void> {
    for (const entry of entries) this.counters.delete(entry)
  }

  async pendingMove(): Promise<CounterMove | undefined> {
    return this.move && structuredClone(this.move)
  }

  async beginMove(move: CounterMove): Promise<void> {
    this.move = structuredClone(move)
  }

  async endMove(): Promise<void> {
    this.move = undefined
  }
}

const PAGE = 1_000
