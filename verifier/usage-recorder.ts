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
 * Counts verifications per key and hour in memory (a Map increment on the hot path, nothing more) and adds
 * them to the store in one batch every `flushMs` (hourly and daily buckets). Counts not yet flushed when the
 * process dies, or of a batch the store refused, are lost: analytics are best effort, verdicts never wait.
 */
export class UsageRecorder {
  /** Counts by hour bucket, then key id: no string is built per verification. */
  private pending = new Map<number, Map<string, Partial<Record<Outcome, number>>>>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly store: VerifierStore,
    private readonly log: Logger,
    private readonly flushMs: number,
  ) {}

  // The current hour bucket and where it ends: worked out once an hour, not on every verification.
  private hour = 0
  private hourEnds = 0

  record(keyId: string | undefined, code: VerdictCode, nowMs: number): void {
    const outcome = OUTCOME[code]
    if (keyId === undefined || outcome === undefined) return
    if (nowMs >= this.hourEnds || nowMs < this.hour) {
      this.hour = bucketStart('hour', nowMs)
      this.hourEnds = this.hour + 3_600_000
    }
    let byKey = this.pending.get(this.hour)
    if (!byKey) this.pending.set(this.hour, (byKey = new Map<string, Partial<Record<Outcome, number>>>()))
    let counts = byKey.get(keyId)
    if (!counts) byKey.set(keyId, (counts = {}))
    counts[outcome] = (counts[outcome] ?? 0) + 1
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
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    const increments: UsageIncrement[] = []
    for (const [hour, byKey] of batch) {
      for (const [keyId, counts] of byKey) {
        increments.push(
          { keyId, granularity: 'hour', time: hour, counts },
          { keyId, granularity: 'day', time: bucketStart('day', hour), counts },
        )
      }
    }
    try {
      await this.store.addUsage(increments)
    } catch (err) {
      this.log.warn({ err, keys: increments.length / 2 }, 'could not record verification counts; this batch is lost')
    }
  }
}
