import { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import { windowStart, type AppliedLimit, type LimitOutcome } from '../shared/ratelimit.js'
import type { KeyStore } from '../shared/store/key-store.js'

interface LocalWindow {
  hash: string
  name: string
  duration: number
  window: number
  /** Usage of every verifier as last reported by Redis (ours included, up to the last reconcile). */
  global: number
  /** Our usage not yet added to Redis. */
  pending: number
}

/**
 * Applies rate limits for one verifier. Exact limits (async:false) are one Redis script per call. Async
 * limits are counted here, in memory, and reconciled every `reconcileMs`: local usage is added to the
 * window's counter in Redis and the global total comes back. Between reconciles a verifier only knows the
 * others' usage as of the last one, so N verifiers can together admit up to N × limit in a window whose
 * traffic all falls between two reconciles (in steady state: limit plus what the others admitted since).
 */
export class RateLimiter {
  private readonly windows = new LRUCache<string, LocalWindow>({ max: 100_000 })
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly store: KeyStore, private readonly log: Logger, private readonly reconcileMs: number) {}

  start(): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.reconcile().catch((err) => this.log.warn({ err }, 'rate-limit reconcile failed')).finally(tick), this.reconcileMs)
      this.timer.unref()
    }
    tick()
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer)
  }

  check(hash: string, applied: AppliedLimit, nowMs: number): LimitOutcome | Promise<LimitOutcome> {
    const window = windowStart(applied.duration, nowMs)
    const reset = window + applied.duration
    if (!applied.async) {
      return this.store.consumeRateLimit(hash, applied.name, applied.limit, applied.duration, applied.cost, nowMs).then(({ ok, used }) => ({
        ok, limit: applied.limit, remaining: Math.max(0, applied.limit - used), reset,
      }))
    }
    const id = `${hash} ${applied.name} ${applied.duration} ${window}`
    let local = this.windows.get(id)
    if (!local) this.windows.set(id, (local = { hash, name: applied.name, duration: applied.duration, window, global: 0, pending: 0 }))
    const used = local.global + local.pending
    if (used + applied.cost > applied.limit) return { ok: false, limit: applied.limit, remaining: Math.max(0, applied.limit - used), reset }
    local.pending += applied.cost
    return { ok: true, limit: applied.limit, remaining: applied.limit - used - applied.cost, reset }
  }

  /** Adds local usage to Redis and learns everyone's, for every window still open. */
  async reconcile(nowMs: number = Date.now()): Promise<void> {
    const open = [...this.windows.entries()].filter(([, w]) => w.window + w.duration > nowMs)
    for (const [id, w] of this.windows.entries()) if (w.window + w.duration <= nowMs) this.windows.delete(id)
    await Promise.all(open.map(async ([, w]) => {
      const pushed = w.pending
      const total = await this.store.addRateLimitUsage(w.hash, w.name, w.duration, w.window, pushed)
      w.pending -= pushed
      w.global = total
    }))
  }
}
