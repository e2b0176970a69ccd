import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import {
  windowStart,
  type AppliedLimit,
  type CounterOwner,
  type LimitOutcome,
  type RateCounter,
} from '../shared/ratelimits/ratelimit.js'
import type { CounterStore } from '../shared/store/counters/counter-store.js'
import { LocalWindows, windowOutcome, type LocalWindow } from './local-windows.js'

/** A key's (or identity's) async window: its counter in the store, and the usage counted here. */
type KeyWindow = RateCounter & LocalWindow

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
 * reconciled every `reconcileMs` (local-windows.ts: a window new to this verifier learns its total at once; an
 * evicted one hands its usage over first; N verifiers may together admit up to N × limit in a window).
 */
export class RateLimiter {
  private readonly windows: LocalWindows<KeyWindow>

  /** `clock` is the one windows are computed with (the verifier's): a window ends by it, not by Date.now(). */
  constructor(
    private readonly store: CounterStore,
    log: Logger,
    reconcileMs: number,
    clock: Clock,
  ) {
    this.windows = new LocalWindows<KeyWindow>((w, delta) => store.addRateLimitUsage(w, delta), log, reconcileMs, clock)
  }

  start(): void {
    this.windows.start()
  }

  /** Stops reconciling and hands the usage counted here over to the store (call it before the store closes). */
  stop(): Promise<void> {
    return this.windows.handOver()
  }

  /** `group`: the slot every counter of this call lives in (shared/ratelimits/ratelimit.ts, CounterOwner). */
  async checkAll(group: CounterOwner, limits: readonly AppliedLimit[], nowMs: number): Promise<LimitsOutcome> {
    const outcomes: (LimitOutcome | undefined)[] = []
    const locals: (KeyWindow | undefined)[] = []
    // Async limits first, in memory, without charging: every one, so that each without room is reported.
    for (const applied of limits) {
      const reset = windowStart(applied.duration, nowMs) + applied.duration
      if (!applied.async) {
        outcomes.push({ ok: true, limit: applied.limit, remaining: 0, reset })
        locals.push(undefined)
        continue
      }
      const local = this.local(group, applied, nowMs)
      outcomes.push(windowOutcome(local.global + local.pending, applied.limit, applied.cost, reset))
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
  reconcile(nowMs?: number): Promise<void> {
    return this.windows.reconcile(nowMs)
  }

  private local(group: CounterOwner, applied: AppliedLimit, nowMs: number): KeyWindow {
    const window = windowStart(applied.duration, nowMs)
    const { owner, name, duration } = applied
    const id = `${group} ${owner} ${duration} ${window} ${name}`
    return this.windows.get(id) ?? this.windows.add(id, { group, owner, name, duration, window, global: 0, pending: 0 })
  }
}
