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
 * store in one flush every `flushMs` (hourly and daily buckets). Counts not yet flushed when the process dies, or
 * taken by a store call that failed, are lost: analytics are best effort, verdicts never wait.
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
   * Adds everything counted so far to the store. The counts are taken as the store sends them (see `countsOf`); those
   * of a failed call are dropped, not retried: its increments are separate commands (keys in many slots), some may
   * have landed, and counting them twice would be worse than missing them. Counts the store had not taken yet when it
   * failed stay for the next flush.
   */
  async flush(): Promise<void> {
    // A flush still sending (the periodic one, when stop() came) is waited for: the store sends a large batch over
    // several turns, and a caller closing the connection after this flush must not cut that one short.
    while (this.flushing !== undefined) await this.flushing
    const tables = this.takeTables()
    if (tables.length === 0) return
    const flushing = this.send(tables)
    this.flushing = flushing
    try {
      await flushing
    } finally {
      this.flushing = undefined
    }
  }

  /**
   * The tables this flush covers: past hours' tables (no longer counted into: taken off the recorder) and the current
   * one, which counting goes on into meanwhile.
   */
  private takeTables(): HourTable[] {
    const tables: HourTable[] = []
    for (const [hour, table] of this.closed) tables.push({ hour, table, current: false })
    this.closed.clear()
    if (this.table.size > 0) tables.push({ hour: this.hour, table: this.table, current: true })
    return tables
  }

  private async send(tables: HourTable[]): Promise<void> {
    const taken = { keys: 0 }
    try {
      await this.store.addUsage(countsOf(tables, taken))
    } catch (err) {
      this.log.warn(
        { err, keys: taken.keys },
        'could not record verification counts; those taken for this flush are lost, the rest stay for the next',
      )
    }
  }
}

/** A table of counts and the hour it counts; `current` while it is the recorder's (counted into during the flush). */
interface HourTable {
  hour: number
  table: CountTable
  current: boolean
}

/**
 * The tables' counts as the store's increments, each key's taken (copied and zeroed) only when the store pulls it —
 * a call's worth at a time, just before that call is sent. Taking them all at the flush's start made a batch (three
 * objects a key, and the calls' arguments) that lived as long as the flush — 40–240 ms of round trips for 1,000 keys at
 * 10,000 verifications a second, across one to four scavenges — so that V8 promoted it, most of what a busy verifier
 * promoted: its old generation filled with dead batches and its major collections came that much sooner
 * (bench/RESULTS.md, 2026-11-26). A count made during the flush to a key not yet taken goes with this flush, one to a
 * key already taken with the next: every count is taken once. Keys of the current table not counted since the flush
 * before are dropped from it as they are met.
 */
function* countsOf(tables: HourTable[], taken: { keys: number }): Generator<UsageIncrement, void, undefined> {
  for (const { hour, table, current } of tables) {
    const day = bucketStart('day', hour)
    for (const [keyId, cell] of table) {
      const counts = takeCounts(cell)
      if (counts === undefined) {
        if (current) {
          table.delete(keyId)
          cell.table = undefined
        }
      } else {
        taken.keys++
        yield { keyId, granularity: 'hour', time: hour, counts }
        yield { keyId, granularity: 'day', time: day, counts }
      }
      // A past hour's table is done with once taken: a kept cell of it counts no more (it looks its key up again).
      if (!current) cell.table = undefined
    }
  }
}

/** The cell's counts, zeroed in it; undefined if it had none. */
function takeCounts(cell: UsageCell): Partial<Record<Outcome, number>> | undefined {
  if (cell.success + cell.rateLimited + cell.usageExceeded === 0) return undefined
  const counts: Partial<Record<Outcome, number>> = {}
  if (cell.success > 0) counts.success = cell.success
  if (cell.rateLimited > 0) counts.rateLimited = cell.rateLimited
  if (cell.usageExceeded > 0) counts.usageExceeded = cell.usageExceeded
  cell.success = cell.rateLimited = cell.usageExceeded = 0
  return counts
}
