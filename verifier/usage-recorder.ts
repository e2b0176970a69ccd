import type { Logger } from 'pino'
import { bucketStart, type Outcome, type UsageIncrement } from '../shared/analytics.js'
import type { KeyStore } from '../shared/store/key-store.js'
import type { VerdictCode } from '../shared/verification.js'

const OUTCOME: Partial<Record<VerdictCode, Outcome>> = { VALID: 'success', RATE_LIMITED: 'rateLimited', USAGE_EXCEEDED: 'usageExceeded' }

/**
 * Counts verifications per key and hour in memory (a Map increment on the hot path, nothing more) and adds
 * them to the store in one batch every `flushMs` (hourly and daily buckets). Counts not yet flushed when the
 * process dies, or of a batch the store refused, are lost: analytics are best effort, verdicts never wait.
 */
export class UsageRecorder {
  private pending = new Map<string, { keyId: string; hour: number; counts: Partial<Record<Outcome, number>> }>()
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly store: KeyStore, private readonly log: Logger, private readonly flushMs: number) {}

  record(keyId: string | undefined, code: VerdictCode, nowMs: number): void {
    const outcome = OUTCOME[code]
    if (keyId === undefined || outcome === undefined) return
    const hour = bucketStart('hour', nowMs)
    const id = `${keyId} ${hour}`
    let entry = this.pending.get(id)
    if (!entry) this.pending.set(id, (entry = { keyId, hour, counts: {} }))
    entry.counts[outcome] = (entry.counts[outcome] ?? 0) + 1
  }

  start(): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.flush().finally(tick), this.flushMs)
      this.timer.unref()
    }
    tick()
  }

  stop(): void {
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
    for (const { keyId, hour, counts } of batch.values()) {
      increments.push({ keyId, granularity: 'hour', time: hour, counts }, { keyId, granularity: 'day', time: bucketStart('day', hour), counts })
    }
    try {
      await this.store.addUsage(increments)
    } catch (err) {
      this.log.warn({ err, keys: batch.size }, 'could not record verification counts; this batch is lost')
    }
  }
}
