import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { windowStart } from '../../shared/ratelimit.js'
import { MemoryKeyStore } from '../../shared/store/memory-key-store.js'
import { RateLimiter } from '../../verifier/rate-limiter.js'
import { ManualClock } from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'

const limiters: RateLimiter[] = []
afterEach(() => limiters.splice(0).forEach((limiter) => limiter.stop()))

describe('async rate limits', () => {
  it("reconciles by the verifier's clock: a window still open by it is pushed, whatever the real time", async () => {
    // A clock long before the real time: by Date.now() every window would look ended (and be dropped unpushed).
    const clock = new ManualClock(Date.UTC(2020, 0, 1, 12))
    const store = new MemoryKeyStore(new MemoryChangeFeed())
    const limiter = new RateLimiter(store, pino({ level: 'silent' }), 10, clock)
    limiters.push(limiter)
    const limit = { name: 'default', limit: 100, duration: 60_000, async: true, cost: 3, owner: 'hash-1' }
    expect((await limiter.checkAll('hash-1', [limit], clock.now())).ok).toBe(true)
    limiter.start()
    // The periodic reconcile (every 10 ms here) adds the 3 calls to the store's window counter.
    const window = windowStart(limit.duration, clock.now())
    await waitFor(
      async () =>
        (await store.addRateLimitUsage(
          { group: 'hash-1', owner: 'hash-1', name: 'default', duration: limit.duration, window },
          0,
        )) === 3,
      'the usage to be reconciled',
    )
  })
})
