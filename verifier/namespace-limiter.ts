import type { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import type { NamespaceLimitRequest } from '../shared/namespace-limits.js'
import { windowStart, type LimitOutcome } from '../shared/ratelimit.js'
import type { NamespaceCounterStore } from '../shared/store/namespace-counter-store.js'
import { growingLru } from './growing-lru.js'

interface LocalWindow {
  namespace: string
  identifier: string
  duration: number
  window: number
  /** Usage of every process as Redis last reported it (ours included, up to the last reconcile). */
  global: number
  /** Our usage not yet added to Redis. */
  pending: number
}

/**
 * Counts ratelimits.limit calls in their identifier's window, as RateLimiter (rate-limiter.ts) counts keys' limits:
 * an exact call (async:false) is one Redis script, so N processes together never pass the limit; an async one is
 * counted here and reconciled every `reconcileMs` (N processes may then together pass up to N × limit in a window).
 */
export class NamespaceLimiter {
  private readonly windows: LRUCache<string, LocalWindow>
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly store: NamespaceCounterStore,
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
            .catch((err) => this.log.warn({ err }, 'namespace rate-limit reconcile failed'))
            .finally(tick),
        this.reconcileMs,
      )
      this.timer.unref()
    }
    tick()
  }

  /** Stops reconciling and hands the usage counted here over to the store (call it before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.reconcile().catch((err) => this.log.warn({ err }, 'namespace rate-limit usage not handed over'))
  }

  async check(request: NamespaceLimitRequest, nowMs: number): Promise<LimitOutcome> {
    const { namespace, identifier, limit, duration, cost } = request
    const reset = windowStart(duration, nowMs) + duration
    if (!request.async) {
      const { ok, used } = await this.store.consumeNamespaceLimit(namespace, identifier, limit, duration, cost, nowMs)
      return { ok, limit, remaining: Math.max(0, limit - used), reset }
    }
    const local = this.local(request, nowMs)
    const used = local.global + local.pending
    const ok = used + cost <= limit
    if (ok) local.pending += cost
    return { ok, limit, remaining: Math.max(0, limit - used - (ok ? cost : 0)), reset }
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
    const held = new Map<LocalWindow, number>()
    const toCharge: (LocalWindow | undefined)[] = []
    for (const request of requests) {
      const { limit, duration, cost } = request
      const reset = windowStart(duration, nowMs) + duration
      if (!request.async) {
        outcomes.push({ ok: true, limit, remaining: 0, reset })
        toCharge.push(undefined)
        continue
      }
      const local = this.local(request, nowMs)
      const used = local.global + local.pending + (held.get(local) ?? 0)
      const ok = used + cost <= limit
      if (ok) held.set(local, (held.get(local) ?? 0) + cost)
      outcomes.push({ ok, limit, remaining: Math.max(0, limit - used - (ok ? cost : 0)), reset })
      toCharge.push(ok ? local : undefined)
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
  async reconcile(nowMs: number = this.clock.now()): Promise<void> {
    const open: LocalWindow[] = []
    for (const [id, w] of this.windows.entries()) {
      if (w.window + w.duration > nowMs) open.push(w)
      else this.windows.delete(id)
    }
    await Promise.all(open.map((w) => this.sync(w)))
  }

  private local(request: NamespaceLimitRequest, nowMs: number): LocalWindow {
    const { namespace, identifier, duration } = request
    const window = windowStart(duration, nowMs)
    const id = JSON.stringify([namespace, identifier, duration, window])
    let local = this.windows.get(id)
    if (!local) {
      this.windows.set(id, (local = { namespace, identifier, duration, window, global: 0, pending: 0 }))
      // A window new to this process (a restart, an eviction) may already be in use elsewhere: learn it now.
      void this.sync(local).catch(() => {})
    }
    return local
  }

  private async sync(w: LocalWindow): Promise<void> {
    const pushed = w.pending
    const total = await this.store.addNamespaceUsage(w.namespace, w.identifier, w.duration, w.window, pushed)
    w.pending -= pushed
    w.global = total
  }
}
