import type { Logger } from 'pino'
import { bucketStart, type Outcome } from '../shared/analytics.js'
import type { UsageStore } from '../shared/store/usage/usage-store.js'
import type { VerdictCode } from '../shared/verification/verification.js'
import { UsageFlush, type HourTable } from './usage-flush.js'
import { addCounts, hasCounts, type CountTable, type UsageCell, type UsageCellHolder } from './usage-table.js'

export type { UsageCell, UsageCellHolder } from './usage-table.js'

const OUTCOME: Partial<Record<VerdictCode, Outcome>> = {
  VALID: 'success',
  RATE_LIMITED: 'rateLimited',
  USAGE_EXCEEDED: 'usageExceeded',
}

/**
 * Counts verifications per key and hour in memory (an increment on the hot path, nothing more) and adds them to the
 * store in one flush every `flushMs` (hourly and daily buckets). Counts not yet flushed when the process dies, or
 * taken by a store call that failed, are lost: analytics are best effort, verdicts never wait.
 *
 * The current hour's table outlives its flushes: a flush takes each key's counts and zeroes them in place, and drops
 * only the keys not counted since the flush before. A table made anew every flush would re-create every busy key's
 * entry and cell each time, on a verifier answering many keys in turn: the Map regrown through its sizes each flush,
 * its large tables faulted in page by page, and the entries promoted to the old generation for the next flush to
 * discard.
 */
export class UsageRecorder {
  /** The current hour's counts by key id: no string is built per verification. */
  private table: CountTable = new Map()
  /**
   * Tables of hours the clock has left (at most a few: an hour's turn, a clock set back), by hour, until a flush takes
   * them (and gives back what its store did not read).
   */
  private readonly closed = new Map<number, CountTable>()
  private timer: NodeJS.Timeout | undefined
  /** The flush being sent, if any. */
  private flushing: Promise<void> | undefined

  constructor(
    private readonly store: Pick<UsageStore, 'addUsage'>,
    private readonly log: Logger,
    private readonly flushMs: number,
  ) {}

  // The current table's hour bucket and where it ends: worked out once an hour, not on every verification.
  private hour = 0
  private hourEnds = 0

  /**
   * Counts one verification of `keyId` with this verdict code at `nowMs`. With a `holder` (the same one each time the
   * same key is counted), its cell is kept there and counted on directly while it is the key's.
   */
  record(keyId: string | undefined, code: VerdictCode, nowMs: number, holder?: UsageCellHolder): void {
    const outcome = OUTCOME[code]
    if (keyId === undefined || outcome === undefined) return
    if (nowMs >= this.hourEnds || nowMs < this.hour) this.enterHour(bucketStart('hour', nowMs))
    let cell = holder?.usage
    if (cell === undefined || cell.table !== this.table) {
      cell = this.table.get(keyId)
      if (cell === undefined) {
        cell = { success: 0, rateLimited: 0, usageExceeded: 0, table: this.table }
        this.table.set(keyId, cell)
      }
      if (holder !== undefined) holder.usage = cell
    }
    cell[outcome]++
  }

  /** Makes `hour`'s table the current one: the one it had if the clock comes back to it before a flush. */
  private enterHour(hour: number): void {
    if (this.table.size > 0) this.closed.set(this.hour, this.table)
    this.table = this.closed.get(hour) ?? new Map<string, UsageCell>()
    this.closed.delete(hour)
    this.hour = hour
    this.hourEnds = hour + 3_600_000
  }

  private stopped = false

  start(): void {
    const tick = () => {
      // A flush in flight when stop() came must not schedule another.
      if (this.stopped) return
      this.timer = setTimeout(() => void this.flush().finally(tick), this.flushMs)
      this.timer.unref()
    }
    tick()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  /**
   * Adds everything counted so far to the store, each key's counts taken as the store reads them (usage-flush.ts).
   * Those of a failed call are dropped, not retried: its increments are separate commands (keys in many slots), some
   * may have landed, and counting them twice would be worse than missing them. Counts the store had not read when it
   * failed stay for the next flush.
   */
  async flush(): Promise<void> {
    // A flush still sending (the periodic one, when stop() came) is waited for: the store sends a large flush over
    // several turns, and a caller closing the connection after this flush must not cut that one short.
    while (this.flushing !== undefined) await this.flushing
    const past: HourTable[] = [...this.closed].map(([hour, table]) => ({ hour, table }))
    this.closed.clear()
    const current = this.table.size > 0 ? { hour: this.hour, table: this.table } : undefined
    if (past.length === 0 && current === undefined) return
    const flushing = this.send(new UsageFlush(past, current))
    this.flushing = flushing
    try {
      await flushing
    } finally {
      this.flushing = undefined
    }
  }

  private async send(flush: UsageFlush): Promise<void> {
    try {
      await this.store.addUsage(flush.increments())
    } catch (err) {
      this.log.warn({ err }, "could not record verification counts: the failed call's are lost, the rest kept")
    }
    for (const { hour, table } of flush.unreadPast()) this.takeBack(hour, table)
  }

  /**
   * Takes back a past hour's table the store did not read to its end: as it was, or — if that hour has a table again
   * (the clock came back to it) — its counts added to that table's.
   */
  private takeBack(hour: number, table: CountTable): void {
    const into = hour === this.hour ? this.table : this.closed.get(hour)
    if (into === undefined) {
      this.closed.set(hour, table)
      return
    }
    for (const [keyId, cell] of table) {
      if (!hasCounts(cell)) continue
      let kept = into.get(keyId)
      if (kept === undefined) into.set(keyId, (kept = { success: 0, rateLimited: 0, usageExceeded: 0, table: into }))
      addCounts(kept, cell)
      cell.table = undefined
    }
  }
}
