import { bucketStart, type UsageIncrement } from '../shared/analytics.js'
import { takeCounts, type CountTable } from './usage-table.js'

/** A table of counts and the hour it counts. */
export interface HourTable {
  hour: number
  table: CountTable
}

/**
 * One flush of a recorder's tables: their counts as the store's increments, each key's taken (copied and zeroed) only
 * when the store reads it, just before the call that carries it is sent. Taking them all at the flush's start would
 * make a batch (three objects a key, and the calls' arguments) that lives as long as the flush — many round trips,
 * with scavenges during them — so that V8 promotes it: a busy verifier's old generation would fill with dead batches
 * and its major collections come sooner. A count made during the flush to a key not yet read goes with this flush, one
 * to a key already read with the next: every count is taken once.
 */
export class UsageFlush {
  /** Index in `past` of the table being read; `past.length` once all are. */
  private readingPast = 0

  /**
   * `past`: tables of hours the clock has left, handed over by the recorder (no longer counted into). `current`: the
   * table current at the flush's start, which counting goes on into; its keys not counted since the flush before are
   * dropped from it as they are met (it stays the recorder's, or becomes a past one if the hour turns meanwhile, and
   * the next flush reads it again either way).
   */
  constructor(
    private readonly past: HourTable[],
    private readonly current: HourTable | undefined,
  ) {}

  *increments(): Generator<UsageIncrement, void, undefined> {
    for (; this.readingPast < this.past.length; this.readingPast++) {
      const { hour, table } = this.past[this.readingPast]!
      for (const [keyId, cell] of table) {
        yield* incrementsOf(keyId, hour, takeCounts(cell))
        // A past hour's table is done with once read: a kept cell of it counts no more (it looks its key up again).
        cell.table = undefined
      }
    }
    if (this.current === undefined) return
    const { hour, table } = this.current
    for (const [keyId, cell] of table) {
      const counts = takeCounts(cell)
      if (counts === undefined) {
        table.delete(keyId)
        cell.table = undefined
      } else yield* incrementsOf(keyId, hour, counts)
    }
  }

  /**
   * The past tables the store did not read to their end (it failed, or stopped early): their counts not yet taken
   * belong to no table of the recorder any more, and are lost unless it takes them back.
   */
  unreadPast(): HourTable[] {
    return this.past.slice(this.readingPast)
  }
}

function* incrementsOf(
  keyId: string,
  hour: number,
  counts: UsageIncrement['counts'] | undefined,
): Generator<UsageIncrement, void, undefined> {
  if (counts === undefined) return
  yield { keyId, granularity: 'hour', time: hour, counts }
  yield { keyId, granularity: 'day', time: bucketStart('day', hour), counts }
}
