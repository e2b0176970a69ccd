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
 * Where one key's counts of the current batch are, kept by a caller that counts the same key again (a memoised
 * verdict): the next count is an increment on it, not two Map look-ups. A cell of an earlier batch (flushed, or an
 * hour gone) is never counted on: `batch` tells.
 */
export interface UsageCell {
  batch: number
  counts: Partial<Record<Outcome, number>>
}

/** Something that keeps a key's usage cell between verifications. */
export interface UsageCellHolder {
  usage?: UsageCell
}

/**
 * Counts verifications per key and hour in memory (a Map increment on the hot path, nothing more) and adds
 * them to the store in one batch every `flushMs` (hourly and daily buckets). Counts not yet flushed when the
 * process dies, or of a batch the store refused, are lost: analytics are best effort, verdicts never wait.
 */
export class UsageRecorder {
  /** Counts by hour bucket, then key id: no string is built per verification. */
  private pending = new Map<number, Map<string, Partial<Record<Outcome, number>>>>()
  private timer: NodeJS.Timeout | undefined
  /** The flush being sent, if any. */
  private flushing: Promise<void> | undefined

  constructor(
    private readonly store: VerifierStore,
    private readonly log: Logger,
    private readonly flushMs: number,
  ) {}

  // The current hour bucket and where it ends: worked out once an hour, not on every verification.
  private hour = 0
  private hourEnds = 0

  /**
   * Which batch counts go to: a new one with every flush and every hour, so that a kept cell is never counted on after
   * its counts were taken or its hour ended.
   */
  private batch = 0

  /**
   * Counts one verification of `keyId` with this verdict code at `nowMs`. With a `holder` (the same one each time the
   * same key is counted), its cell is kept there and counted on directly while its batch lasts.
   */
  record(keyId: string | undefined, code: VerdictCode, nowMs: number, holder?: UsageCellHolder): void {
    const outcome = OUTCOME[code]
    if (keyId === undefined || outcome === undefined) return
    if (nowMs >= this.hourEnds || nowMs < this.hour) {
      this.hour = bucketStart('hour', nowMs)
      this.hourEnds = this.hour + 3_600_000
      this.batch++
    }
    const cell = holder?.usage
    let counts: Partial<Record<Outcome, number>>
    if (cell !== undefined && cell.batch === this.batch) counts = cell.counts
    else {
      counts = this.countsOf(keyId)
      // Only a caller that keeps it gets a cell: a count without a holder allocates nothing.
      if (holder !== undefined) holder.usage = { batch: this.batch, counts }
    }
    counts[outcome] = (counts[outcome] ?? 0) + 1
  }

  /** The key's counts in the current hour of the pending batch. */
  private countsOf(keyId: string): Partial<Record<Outcome, number>> {
    let byKey = this.pending.get(this.hour)
    if (!byKey) this.pending.set(this.hour, (byKey = new Map<string, Partial<Record<Outcome, number>>>()))
    let counts = byKey.get(keyId)
    if (!counts) byKey.set(keyId, (counts = {}))
    return counts
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
    if (this.pending.size === 0) return
    const flushing = this.send(this.takeBatch())
    this.flushing = flushing
    try {
      await flushing
    } finally {
      this.flushing = undefined
    }
  }

  /** Takes the pending counts as the store's increments, and starts a new batch. */
  private takeBatch(): UsageIncrement[] {
    const batch = this.pending
    this.pending = new Map()
    // Cells kept by callers point into the batch just taken: none may be counted on again.
    this.batch++
    const increments: UsageIncrement[] = []
    for (const [hour, byKey] of batch) {
      for (const [keyId, counts] of byKey) {
        increments.push(
          { keyId, granularity: 'hour', time: hour, counts },
          { keyId, granularity: 'day', time: bucketStart('day', hour), counts },
        )
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
