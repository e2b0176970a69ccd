import type { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import type { LimitOutcome } from '../shared/ratelimits/ratelimit.js'
import { growingLru } from './growing-lru.js'

/** An async rate-limit window as one process counts it: the store's total as last learnt, plus what it added since. */
export interface LocalWindow {
  duration: number
  /** Unix ms the window starts (shared/ratelimits/ratelimit.ts, windowStart). */
  window: number
  /** Usage of every process as the store last reported it (ours included, up to the last reconcile). */
  global: number
  /** Our usage not yet added to the store. */
  pending: number
}

/**
 * The one store call the windows make: adds `delta` to the window's counter in the store and resolves to the counter's
 * total, every process's usage (a `delta` of 0 only reads it). Rejects when the store does; the usage stays pending.
 */
export type AddWindowUsage<W extends LocalWindow> = (window: W, delta: number) => Promise<number>

// Windows held in memory at the most: the least recently used goes first, handing its pending usage over.
const MAX_WINDOWS = 100_000

/**
 * The async windows of one kind of rate limit (keys' limits, namespace limits), counted in this process and
 * reconciled with the store every `reconcileMs`: pending usage is added to the window's counter in the store and the
 * global total comes back. A window new to this process learns its total at once, and one evicted from memory hands
 * its usage over as it goes, so usage is lost only with the process. Between reconciles a process knows the others'
 * usage only as of the last one, so N processes can together admit up to N × limit in a window whose calls all fall
 * between two reconciles.
 *
 * Charging is the caller's: it reads `global + pending` (`outcome`) and adds to `pending` once every limit of its
 * call had room.
 */
export class LocalWindows<W extends LocalWindow> {
  private readonly windows: LRUCache<string, W>
  private timer: NodeJS.Timeout | undefined

  /** `clock` is the one windows are computed with (the process's): a window ends by it, not by Date.now(). */
  constructor(
    private readonly addUsage: AddWindowUsage<W>,
    private readonly log: Logger,
    private readonly reconcileMs: number,
    private readonly clock: Clock,
  ) {
    this.windows = growingLru<string, W>(MAX_WINDOWS, {
      dispose: (window, _id, reason) => {
        if (reason === 'evict' && window.pending > 0) void this.sync(window).catch(() => {})
      },
    })
  }

  /** The window counted under `id`, if this process counts it. */
  get(id: string): W | undefined {
    return this.windows.get(id)
  }

  /** Counts `window` under `id` from now on, and learns the store's total for it (it may be in use elsewhere). */
  add(id: string, window: W): W {
    this.windows.set(id, window)
    void this.sync(window).catch(() => {})
    return window
  }

  start(): void {
    const tick = () => {
      const timer = setTimeout(
        () =>
          void this.reconcile()
            .catch((err) => this.log.warn({ err }, 'rate-limit reconcile failed'))
            // A stop while this reconcile was in flight ends the loop: the store may be closing.
            .finally(() => this.timer === timer && tick()),
        this.reconcileMs,
      )
      this.timer = timer.unref()
    }
    tick()
  }

  /** Stops reconciling; usage counted since the last reconcile stays here. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Stops reconciling and hands the usage counted here over to the store (call it before the store closes). */
  async handOver(): Promise<void> {
    this.stop()
    await this.reconcile().catch((err) => this.log.warn({ err }, 'rate-limit usage not handed over'))
  }

  /** Adds local usage to the store and learns everyone's, for every window still open (an ended one counts no more). */
  async reconcile(nowMs: number = this.clock.now()): Promise<void> {
    const open: W[] = []
    for (const [id, w] of this.windows.entries()) {
      if (w.window + w.duration > nowMs) open.push(w)
      else this.windows.delete(id)
    }
    await Promise.all(open.map((w) => this.sync(w)))
  }

  private async sync(w: W): Promise<void> {
    const pushed = w.pending
    const total = await this.addUsage(w, pushed)
    w.pending -= pushed
    w.global = total
  }
}

/**
 * What charging `cost` to a window already holding `used` would give, against `limit`; charges nothing. `remaining`
 * counts the charge only if it fits.
 */
export function windowOutcome(used: number, limit: number, cost: number, reset: number): LimitOutcome {
  const ok = used + cost <= limit
  return { ok, limit, remaining: Math.max(0, limit - used - (ok ? cost : 0)), reset }
}
