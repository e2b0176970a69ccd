import { systemClock, type Clock } from '../../clock.js'
import type { LeakReportStore } from './leak-report-store.js'

// Expired claims are swept when this many are held: a flood of distinct reports cannot grow the map unseen.
const SWEEP_AT = 10_000

/** Claims of leak reports in process memory (the embedded default), expiring on `clock`. */
export class MemoryLeakReportStore implements LeakReportStore {
  /** Digest → when its claim ends, unix ms. */
  private readonly claims = new Map<string, number>()

  constructor(private readonly clock: Clock = systemClock) {}

  async claimReport(digest: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now()
    if (this.claims.size >= SWEEP_AT) {
      for (const [held, until] of this.claims) if (until <= now) this.claims.delete(held)
    }
    const until = this.claims.get(digest)
    if (until !== undefined && until > now) return false
    this.claims.set(digest, now + ttlMs)
    return true
  }

  async keepReport(digest: string, ttlMs: number): Promise<void> {
    this.claims.set(digest, this.clock.now() + ttlMs)
  }

  async releaseReport(digest: string): Promise<void> {
    this.claims.delete(digest)
  }
}
