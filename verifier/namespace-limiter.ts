import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import type { NamespaceLimitRequest } from '../shared/ratelimits/namespace-limits.js'
import { windowStart, type LimitOutcome } from '../shared/ratelimits/ratelimit.js'
import type { CounterStore } from '../shared/store/counters/counter-store.js'
import { LocalWindows, windowOutcome, type LocalWindow } from './local-windows.js'

/** One identifier's async window in a namespace, and the usage counted here. */
interface NamespaceWindow extends LocalWindow {
  namespace: string
  identifier: string
}

/**
 * Counts ratelimits.limit calls in their identifier's window, as RateLimiter (rate-limiter.ts) counts keys' limits:
 * an exact call (async:false) is one Redis script, so N processes together never pass the limit; an async one is
 * counted here and reconciled every `reconcileMs` (local-windows.ts; N processes may then together pass up to
 * N × limit in a window).
 */
export class NamespaceLimiter {
  private readonly windows: LocalWindows<NamespaceWindow>

  constructor(
    private readonly store: CounterStore,
    log: Logger,
    reconcileMs: number,
    clock: Clock,
  ) {
    const addUsage = (w: NamespaceWindow, delta: number) =>
      store.addNamespaceUsage(w.namespace, w.identifier, w.duration, w.window, delta)
    this.windows = new LocalWindows(addUsage, log, reconcileMs, clock)
  }

  start(): void {
    this.windows.start()
  }

  /** Stops reconciling and hands the usage counted here over to the store (call it before the store closes). */
  stop(): Promise<void> {
    return this.windows.handOver()
  }

  async check(request: NamespaceLimitRequest, nowMs: number): Promise<LimitOutcome> {
    const { namespace, identifier, limit, duration, cost } = request
    const reset = windowStart(duration, nowMs) + duration
    if (!request.async) {
      const { ok, used } = await this.store.consumeNamespaceLimit(namespace, identifier, limit, duration, cost, nowMs)
      return { ok, limit, remaining: Math.max(0, limit - used), reset }
    }
    const local = this.local(request, nowMs)
    const outcome = windowOutcome(local.global + local.pending, limit, cost, reset)
    if (outcome.ok) local.pending += cost
    return outcome
  }

  /**
   * Several calls as one, all or nothing (v2's multiLimit): each window is charged only if every one has room, and
   * each outcome says whether its own window had. Exact windows live in slots of their own (one per namespace and
   * identifier), so no one script reaches them all: each is charged if it has room, then given back if another had
   * none. In between, a concurrent call may be refused for usage given back a moment later, never let through for
   * usage not counted (Unkey's multiLimit rolls back the same way); a store lost in between keeps the charge.
   */
  async checkAll(requests: readonly NamespaceLimitRequest[], nowMs: number): Promise<LimitOutcome[]> {
    const outcomes: LimitOutcome[] = []
    // Async windows first, in memory, charged at the end; a window named twice counts the earlier call.
    const held = new Map<NamespaceWindow, number>()
    const toCharge: (NamespaceWindow | undefined)[] = []
    for (const request of requests) {
      const { limit, duration, cost } = request
      const reset = windowStart(duration, nowMs) + duration
      if (!request.async) {
        outcomes.push({ ok: true, limit, remaining: 0, reset })
        toCharge.push(undefined)
        continue
      }
      const local = this.local(request, nowMs)
      const outcome = windowOutcome(local.global + local.pending + (held.get(local) ?? 0), limit, cost, reset)
      if (outcome.ok) held.set(local, (held.get(local) ?? 0) + cost)
      outcomes.push(outcome)
      toCharge.push(outcome.ok ? local : undefined)
    }
    // Then the exact ones, each charged if its window has room: sent in order, so a window named twice sees the
    // earlier call's charge.
    const exact = requests.flatMap((request, i) => (request.async ? [] : [i]))
    const charged = await Promise.all(
      exact.map((i) => {
        const { namespace, identifier, limit, duration, cost } = requests[i]!
        return this.store.consumeNamespaceLimit(namespace, identifier, limit, duration, cost, nowMs)
      }),
    )
    exact.forEach((i, j) => {
      const { ok, used } = charged[j]!
      outcomes[i] = { ...outcomes[i]!, ok, remaining: Math.max(0, requests[i]!.limit - used) }
    })
    if (outcomes.every((outcome) => outcome.ok)) {
      toCharge.forEach((local, i) => {
        if (local) local.pending += requests[i]!.cost
      })
      return outcomes
    }
    await Promise.all(
      exact.flatMap((i, j) => {
        const { namespace, identifier, duration, cost } = requests[i]!
        if (!charged[j]!.ok || cost === 0) return []
        return [this.store.addNamespaceUsage(namespace, identifier, duration, windowStart(duration, nowMs), -cost)]
      }),
    )
    // What had room reports its window as it is without this batch.
    return outcomes.map((outcome, i) =>
      outcome.ok ? { ...outcome, remaining: outcome.remaining + requests[i]!.cost } : outcome,
    )
  }

  /** Adds local usage to the store and learns everyone's, for every window still open (an ended one counts no more). */
  reconcile(nowMs?: number): Promise<void> {
    return this.windows.reconcile(nowMs)
  }

  private local(request: NamespaceLimitRequest, nowMs: number): NamespaceWindow {
    const { namespace, identifier, duration } = request
    const window = windowStart(duration, nowMs)
    const id = JSON.stringify([namespace, identifier, duration, window])
    return (
      this.windows.get(id) ?? this.windows.add(id, { namespace, identifier, duration, window, global: 0, pending: 0 })
    )
  }
}
