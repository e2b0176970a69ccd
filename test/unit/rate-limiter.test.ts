import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import type { NamespaceLimitRequest } from '../../shared/ratelimits/namespace-limits.js'
import { windowStart, type RateCounter } from '../../shared/ratelimits/ratelimit.js'
import type { CounterStore } from '../../shared/store/counters/counter-store.js'
import { createMemoryStore } from '../../shared/store/memory-store.js'
import { NamespaceLimiter } from '../../verifier/namespace-limiter.js'
import { RateLimiter } from '../../verifier/rate-limiter.js'
import { ManualClock } from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'

const limiters: RateLimiter[] = []
afterEach(() => Promise.all(limiters.splice(0).map((limiter) => limiter.stop())))

describe('async rate limits', () => {
  it("reconciles by the verifier's clock: a window still open by it is pushed, whatever the real time", async () => {
    // A clock long before the real time: by Date.now() every window would look ended (and be dropped unpushed).
    const clock = new ManualClock(Date.UTC(2020, 0, 1, 12))
    const store = createMemoryStore(new MemoryChangeFeed())
    const limiter = new RateLimiter(store.counters, pino({ level: 'silent' }), 10, clock)
    limiters.push(limiter)
    const limit = { name: 'default', limit: 100, duration: 60_000, async: true, cost: 3, owner: 'hash-1' }
    expect((await limiter.checkAll('hash-1', [limit], clock.now())).ok).toBe(true)
    limiter.start()
    // The periodic reconcile (every 10 ms here) adds the 3 calls to the store's window counter.
    const window = windowStart(limit.duration, clock.now())
    await waitFor(
      async () =>
        (await store.counters.addRateLimitUsage(
          { group: 'hash-1', owner: 'hash-1', name: 'default', duration: limit.duration, window },
          0,
        )) === 3,
      'the usage to be reconciled',
    )
  })
})

// Both limiters keep at most 100,000 windows in memory; the least recently used one goes first, and hands the usage
// counted here and not yet reconciled over to the store as it goes (else it would be lost).
const WINDOWS = 100_000

describe('a window evicted from memory', () => {
  it('hands its pending usage over to the store, and exactly one window goes when one too many is open', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12))
    const pushed: string[] = []
    const limiter = new RateLimiter(keyUsageHandedOver(pushed), pino({ level: 'silent' }), 1_000, clock)
    const limit = (owner: string, cost: number) => ({
      name: 'l',
      limit: 100,
      duration: 60_000,
      async: true,
      cost,
      owner,
    })
    expect((await limiter.checkAll('k0', [limit('k0', 3)], clock.now())).ok).toBe(true)
    for (let i = 1; i < WINDOWS; i++) await limiter.checkAll(`k${i}`, [limit(`k${i}`, 1)], clock.now())
    // k0 is used again: now k1 is the least recently used.
    await limiter.checkAll('k0', [limit('k0', 1)], clock.now())
    expect(pushed).toEqual([])
    await limiter.checkAll('one-more', [limit('one-more', 1)], clock.now())
    await new Promise((resolve) => setImmediate(resolve))
    expect(pushed).toEqual(['k1 1'])
  })

  it('does the same for namespace limits: the least recently used window goes, and hands its usage over', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12))
    const pushed: string[] = []
    const limiter = new NamespaceLimiter(handedOver(pushed), pino({ level: 'silent' }), 1_000, clock)
    expect((await limiter.check(namespaceRequest('i0', 3), clock.now())).ok).toBe(true)
    for (let i = 1; i < WINDOWS; i++) await limiter.check(namespaceRequest(`i${i}`, 1), clock.now())
    await limiter.check(namespaceRequest('i0', 1), clock.now())
    expect(pushed).toEqual([])
    await limiter.check(namespaceRequest('one-more', 1), clock.now())
    await new Promise((resolve) => setImmediate(resolve))
    expect(pushed).toEqual(['i1 1'])
  })
})

describe('key limits, stopped', () => {
  it('hand the async usage counted here over to the store', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12))
    const pushed: string[] = []
    const limiter = new RateLimiter(keyUsageHandedOver(pushed), pino({ level: 'silent' }), 1_000, clock)
    const limit = { name: 'l', limit: 100, duration: 60_000, async: true, cost: 2, owner: 'hash-1' }
    expect((await limiter.checkAll('hash-1', [limit], clock.now())).ok).toBe(true)
    expect(pushed).toEqual([])
    await limiter.stop()
    expect(pushed).toEqual(['hash-1 2'])
  })
})

describe('namespace limits, stopped', () => {
  it('hand the async usage counted here over to the store', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12))
    const pushed: string[] = []
    const limiter = new NamespaceLimiter(handedOver(pushed), pino({ level: 'silent' }), 1_000, clock)
    expect((await limiter.check(namespaceRequest('user', 2), clock.now())).ok).toBe(true)
    expect(pushed).toEqual([])
    await limiter.stop()
    expect(pushed).toEqual(['user 2'])
  })
})

/** A key-limit counter store that notes every usage handed over to it as `owner delta`. */
function keyUsageHandedOver(pushed: string[]): CounterStore {
  return {
    addRateLimitUsage: async (counter: RateCounter, delta: number) => {
      if (delta !== 0) pushed.push(`${counter.owner} ${delta}`)
      return 0
    },
  } as unknown as CounterStore
}

/** A namespace counter store that notes every usage handed over to it as `identifier delta`. */
function handedOver(pushed: string[]): CounterStore {
  return {
    addNamespaceUsage: async (_namespace: string, identifier: string, _d: number, _w: number, delta: number) => {
      if (delta !== 0) pushed.push(`${identifier} ${delta}`)
      return 0
    },
  } as unknown as CounterStore
}

const namespaceRequest = (identifier: string, cost: number): NamespaceLimitRequest => ({
  namespace: 'ns',
  identifier,
  limit: 100,
  duration: 60_000,
  cost,
  async: true,
})
