import type { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import {
  windowStart,
  type AppliedLimit,
  type CounterOwner,
  type LimitOutcome,
  type RateCounter,
} from '../shared/ratelimit.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import { growingLru } from './growing-lru.js'

interface LocalWindow extends RateCounter {
  /** Usage of every verifier as last reported by Redis (ours included, up to the last reconcile). */
  global: number
  /** Our usage not yet added to Redis. */
  pending: number
}

export interface LimitsOutcome {
  ok: boolean
  /**
   * One per limit, in order: the state after this call (charged only if every limit had room), `ok: false` for each
   * limit without room; undefined for a limit not looked at (an exact one, when an async limit refused the call
   * before Redis was asked).
   */
  outcomes: (LimitOutcome | undefined)[]
  /** Index of the first limit without room. */
  failed: number | undefined
}

/**
 * Applies the rate limits of one call, all or nothing: a call refused by one limit is charged to none.
 *
 * Exact limits (async:false) are one Redis script per call. Async limits are counted here, in memory, and
 * reconciled every `reconcileMs`: local usage is added to the window's counter in Redis and the global total
 * comes back (a window new to this verifier learns it at once; an evicted one hands its usage over first).
 * Between reconciles a verifier only knows the others' usage as of the last one, so N verifiers can
 * together admit up to N × limit in a window whose calls all fall between two reconciles.
 */
export class RateLimiter {
  private readonly windows: LRUCache<string, LocalWindow>
  private timer: NodeJS.Timeout | undefined

  /** `clock` is the one windows are computed with (the verifier's): a window ends by it, not by Date.now(). */
  constructor(
    private readonly store: VerifierStore,
    private readonly log: Logger,
    private readonly reconcileMs: number,
    private readonly clock: Clock,
  ) {
    this.windows = growingLru<string, LocalWindow>(100_000, {
      dispose: (window, _id, reason) => {
        if (reason === 'evict' && window.pending > 0) void this.sync(window).catch(() => {})
      },
    })
  }

  start(): void {
    const tick = () => {
      this.timer = setTimeout(
        () =>
          void this.reconcile()
            .catch((err) => this.log.warn({ err }, 'rate-limit reconcile failed'))
            .finally(tick),
        this.reconcileMs,
      )
      this.timer.unref()
    }
    tick()
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer)
  }

  /** `group`: the slot every counter of this call lives in (shared/ratelimit.ts, CounterOwner). */
  async checkAll(group: CounterOwner, limits: readonly AppliedLimit[], nowMs: number): Promise<LimitsOutcome> {
    const outcomes: (LimitOutcome | undefined)[] = []
    const locals: (LocalWindow | undefined)[] = []
    // Async limits first, in memory, without charging: every one, so that each without room is reported.
    for (const applied of limits) {
      const reset = windowStart(applied.duration, nowMs) + applied.duration
      if (!applied.async) {
        outcomes.push({ ok: true, limit: applied.limit, remaining: 0, reset })
        locals.push(undefined)
        continue
      }
      const local = this.local(group, applied, nowMs)
      const used = local.global + local.pending
      const ok = used + applied.cost <= applied.limit
      outcomes.push({
        ok,
        limit: applied.limit,
        remaining: Math.max(0, applied.limit - used - (ok ? applied.cost : 0)),
        reset,
      })
      locals.push(local)
    }
    /** The async limits' outcomes of a refused call: nothing charged, each remaining as it was before the call. */
    const uncharged = (outcome: LimitOutcome | undefined, i: number) => {
      const local = locals[i]
      return outcome && local
        ? { ...outcome, remaining: Math.max(0, limits[i]!.limit - local.global - local.pending) }
        : outcome
    }
    const firstFull = outcomes.findIndex((outcome) => outcome?.ok === false)
    // Refused in memory: the exact limits are neither charged nor read (no round trip for a refused call).
    if (firstFull >= 0) {
      const checked = outcomes.map((outcome, i) => (limits[i]!.async ? uncharged(outcome, i) : undefined))
      return { ok: false, outcomes: checked, failed: firstFull }
    }
    // Then the exact ones, all or nothing, in one script, which reads every counter whether or not it charges.
    const exactIndexes = limits.flatMap((applied, i) => (applied.async ? [] : [i]))
    if (exactIndexes.length > 0) {
      const { failed, used } = await this.store.consumeRateLimits(
        group,
        exactIndexes.map((i) => limits[i]!),
        nowMs,
      )
      exactIndexes.forEach((i, j) => {
        const applied = limits[i]!
        // Refused: nothing was charged, and each counter is as it was; every limit it leaves no room in is full.
        const ok = failed === undefined || used[j]! + applied.cost <= applied.limit
        outcomes[i] = { ...outcomes[i]!, ok, remaining: Math.max(0, applied.limit - used[j]!) }
      })
      if (failed !== undefined) return { ok: false, outcomes: outcomes.map(uncharged), failed: exactIndexes[failed] }
    }
    // Every limit had room: now charge the async ones.
    locals.forEach((local, i) => {
      if (local) local.pending += limits[i]!.cost
    })
    return { ok: true, outcomes, failed: undefined }
  }

  /** Adds local usage to Redis and learns everyone's, for every window still open. */
  async reconcile(nowMs: number = this.clock.now()): Promise<void> {
    const open: LocalWindow[] = []
    for (const [id, w] of this.windows.entries()) {
      if (w.window + w.duration > nowMs) open.push(w)
      else this.windows.delete(id)
    }
    await Promise.all(open.map((w) => this.sync(w)))
  }

  private local(group: CounterOwner, applied: AppliedLimit, nowMs: number): LocalWindow {
    const window = windowStart(applied.duration, nowMs)
    const { owner, name, duration } = applied
    const id = `${group} ${owner} ${duration} ${window} ${name}`
    let local = this.windows.get(id)
    if (!local) {
      this.windows.set(id, (local = { group, owner, name, duration, window, global: 0, pending: 0 }))
      // A window new to this verifier (a restart, an eviction) may already be in use elsewhere: learn it now.
      void this.sync(local).catch(() => {})
    }
    return local
  }

  private async sync(w: LocalWindow): Promise<void> {
    const pushed = w.pending
    const total = await this.store.addRateLimitUsage(w, pushed)
    w.pending -= pushed
    w.global = total
  }
}
