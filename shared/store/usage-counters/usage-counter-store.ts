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
  /** The hourly counters of the page, each once. */
  counters: HourCounter[]
  /** Every store entry the page read, daily ones too (the hours hold the same counts): dropped once moved. */
  entries: string[]
  /** Where the next page starts; undefined: this was the last. */
  cursor: string | undefined
}

/**
 * A page's move, written down before its rows are inserted: a move that dies before the page's entries are dropped is
 * finished from here (the same rows under the same token, which the engine drops if it has them), whatever pages the
 * store would answer by then.
 */
export interface CounterMove {
  /** The insert's deduplication token. */
  token: string
  /** The rows inserted into the hourly rollup. */
  rows: Record<string, unknown>[]
  /** The store entries dropped once the rows are in. */
  entries: string[]
}

/**
 * The verification counters verifiers kept per key, hour and day before analytics (`kg:usage:…`), read once to be
 * moved into the analytics engine's rollups and then dropped (analytics/ingest/move-usage-counters.ts). Nothing
 * writes them any more.
 */
export interface UsageCounterStore {
  /**
   * The page of counters from `cursor` (undefined: the first). Entries dropped between pages do not make a later page
   * skip others; one present from the first page to the last is in at least one of them.
   */
  readCounters(cursor: string | undefined): Promise<CounterPage>
  /** Removes the entries named (once their counts are in the engine). */
  dropCounters(entries: readonly string[]): Promise<void>
  /** The move begun and not ended, if any (at most one at a time). */
  pendingMove(): Promise<CounterMove | undefined>
  /** Writes `move` down, in place of any before it. */
  beginMove(move: CounterMove): Promise<void>
  /** Forgets the move written down, once its entries are dropped. */
  endMove(): Promise<void>
}
