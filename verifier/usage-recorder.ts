import type { Logger } from 'pino'
import { bucketStart, type Outcome, type UsageIncrement } from '../shared/analytics.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import type { VerdictCode } from '../shared/verification.js'

const OUTCOME: Partial<Record<VerdictCode, Outcome>> = {
  VALID: 'success',
  RATE_LIMITED: 'rateLimited',
  USAGE_EXCEEDED: 'usageExceeded',
}

/**
 * One key's counts since the last flush, in the table of the hour they belong to. A caller that counts the same key
 * again (a memoised verdict) keeps it and counts on it directly, without a look-up; it stays the key's while `table`
 * is the recorder's current one.
 */
export interface UsageCell {
  success: number
  rateLimited: number
  usageExceeded: number
  /** The table that holds it; undefined once a flush dropped it (idle since the flush before, or of a past hour). */
  table: CountTable | undefined
}

type CountTable = Map<string, UsageCell>

/** Something that keeps a key's usage cell between verifications. */
export interface UsageCellHolder {
  usage?: UsageCell
}

/**
 * Counts verifications per key and hour in memory (an increment on the hot path, nothing more) and adds them to the
 * store in one batch every `flushMs` (hourly and daily buckets). Counts not yet flushed when the process dies, or of a
 * batch the store refused, are lost: analytics are best effort, verdicts never wait.
 *
 * The current hour's table outlives its flushes: a flush takes each key's counts and zeroes them in place, and drops
 * only the keys not counted since the flush before. A table made anew every flush re-created every busy key's entry
 * and cell each time — measured on a verifier answering 10,000 keys in turn (bench/RESULTS.md, 2026-11-25): the Map
 * regrown through its sizes each flush, its large tables faulted in page by page, and the entries promoted to the old
 * generation for the next flush to discard.
 */
export class UsageRecorder {
  /** The current hour's counts by key id: no string is built per verification. */
  private table: CountTable = new Map()
  /** Tables of hours the clock has left (at most a few: an hour's turn, a clock set back), by hour, until flushed. */
  private readonly closed = new Map<number, CountTable>()
  private timer: NodeJS.Timeout | undefined
  /** The flush being sent, if any. */
  private flushing: Promise<void> | undefined

  constructor(
    private readonly store: VerifierStore,
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
   * Adds everything counted so far to the store. A failed batch is dropped, not retried: its increments are
   * separate commands (keys in many slots), some may have landed, and counting them twice would be worse
   * than missing them.
   */
  async flush(): Promise<void> {
    // A flush still sending (the periodic one, when stop() came) is waited for: the store sends a large batch over
    // several turns, and a caller closing the connection after this flush must not cut that one short.
    while (this.flushing !== undefined) await this.flushing
    const increments = this.takeBatch()
    if (increments.length === 0) return
    const flushing = this.send(increments)
    this.flushing = flushing
    try {
      await flushing
    } finally {
      this.flushing = undefined
    }
  }

  /**
   * Takes every count so far as the store's increments (a copy: counting goes on meanwhile, into the next batch),
   * zeroes the current table's cells, and drops the keys not counted since the last flush and past hours' tables.
   */
  private takeBatch(): UsageIncrement[] {
    const increments: UsageIncrement[] = []
    for (const [hour, table] of this.closed) {
      for (const [keyId, cell] of table) {
        takeCounts(increments, keyId, hour, cell)
        cell.table = undefined
      }
    }
    this.closed.clear()
    for (const [keyId, cell] of this.table) {
      if (!takeCounts(increments, keyId, this.hour, cell)) {
        this.table.delete(keyId)
        cell.table = undefined
      }
    }
    return increments
  }

  private async send(increments: UsageIncrement[]): Promise<void> {
    try {
      await this.store.addUsage(increments)
    } catch (err) {
      this.log.warn({ err, keys: increments.length / 2 }, 'could not record verification counts; this batch is lost')
    }
  }
}

/** Adds the cell's counts as the key's hour and day increments, and zeroes them. False if it had none. */
function takeCounts(increments: UsageIncrement[], keyId: string, hour: number, cell: UsageCell): boolean {
  if (cell.success + cell.rateLimited + cell.usageExceeded === 0) return false
  const counts: Partial<Record<Outcome, number>> = {}
  if (cell.success > 0) counts.success = cell.success
  if (cell.rateLimited > 0) counts.rateLimited = cell.rateLimited
  if (cell.usageExceeded > 0) counts.usageExceeded = cell.usageExceeded
  cell.success = cell.rateLimited = cell.usageExceeded = 0
  increments.push(
    { keyId, granularity: 'hour', time: hour, counts },
    { keyId, granularity: 'day', time: bucketStart('day', hour), counts },
  )
  return true
}
