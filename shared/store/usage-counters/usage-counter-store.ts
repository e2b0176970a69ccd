/**
 * One key's verification counts in one hour as verifiers once kept them in the store, before every verification was
 * recorded for the analytics engine: only these three outcomes were counted.
 */
export interface HourCounter {
  keyId: string
  /** The hour's start, Unix ms. */
  hour: number
  valid: number
  rateLimited: number
  usageExceeded: number
}

/** A page of the counters left in the store. */
export interface CounterPage {
  /** The hourly counters of the page. */
  counters: HourCounter[]
  /** Every store entry the page read, daily ones too (the hours hold the same counts): dropped once moved. */
  entries: string[]
  /** Where the next page starts; undefined: this was the last. */
  cursor: string | undefined
}

/**
 * The verification counters verifiers kept per key, hour and day before analytics (`kg:usage:…`), read once to be
 * moved into the analytics engine's rollups and then dropped (analytics/ingest/move-usage-counters.ts). Nothing
 * writes them any more.
 */
export interface UsageCounterStore {
  /** The page of counters from `cursor` (undefined: the first). */
  readCounters(cursor: string | undefined): Promise<CounterPage>
  /** Removes the entries named (once their counts are in the engine). */
  dropCounters(entries: readonly string[]): Promise<void>
}
