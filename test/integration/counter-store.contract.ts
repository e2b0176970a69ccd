import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { windowStart } from '../../shared/ratelimits/ratelimit.js'
import type { CounterStore } from '../../shared/store/counters/counter-store.js'

const MINUTE = 60_000

/** The CounterStore contract (counter-store.ts: `store.counters`), run by the store's contract. */
export function counterStoreContract(counters: () => CounterStore): void {
  describe('rate-limit counters', () => {
    it("charges a key's exact limits all or nothing, and says which limit had no room", async () => {
      const owner = generateKey('t').hash
      const now = Date.now()
      const limits = [
        { owner, name: 'small', limit: 3, cost: 2, duration: MINUTE },
        { owner, name: 'large', limit: 10, cost: 1, duration: MINUTE },
      ]
      expect(await counters().consumeRateLimits(owner, limits, now)).toEqual({ failed: undefined, used: [2, 1] })
      // `small` has no room for 2 more: nothing is charged, `large` included.
      expect(await counters().consumeRateLimits(owner, limits, now)).toEqual({ failed: 0, used: [2, 1] })
      const window = windowStart(MINUTE, now)
      const counter = { group: owner, owner, duration: MINUTE, window }
      expect(await counters().addRateLimitUsage({ ...counter, name: 'large' }, 0)).toBe(1)
      // The next window starts from nothing.
      expect(await counters().consumeRateLimits(owner, limits, window + MINUTE)).toEqual({
        failed: undefined,
        used: [2, 1],
      })
    })

    it("adds locally counted usage to a key's window and answers its total", async () => {
      const owner = generateKey('t').hash
      const counter = { group: owner, owner, name: 'async', duration: MINUTE, window: windowStart(MINUTE, Date.now()) }
      expect(await counters().addRateLimitUsage(counter, 4)).toBe(4)
      expect(await counters().addRateLimitUsage(counter, 3)).toBe(7)
      expect(await counters().addRateLimitUsage(counter, 0)).toBe(7)
      // Another owner's counter, and this owner's next window, are others.
      expect(await counters().addRateLimitUsage({ ...counter, owner: `${owner}x` }, 0)).toBe(0)
      expect(await counters().addRateLimitUsage({ ...counter, window: counter.window + MINUTE }, 0)).toBe(0)
      const [limit] = [{ owner, name: 'async', limit: 8, cost: 2, duration: MINUTE }]
      expect(await counters().consumeRateLimits(owner, [limit], counter.window)).toEqual({ failed: 0, used: [7] })
    })

    it("charges a namespace's window only while it has room, and takes usage back", async () => {
      const namespace = `contract-${newId('req')}`
      const now = Date.now()
      const consume = (cost: number) => counters().consumeNamespaceLimit(namespace, 'user 1', 5, MINUTE, cost, now)
      expect(await consume(3)).toEqual({ ok: true, used: 3 })
      expect(await consume(3)).toEqual({ ok: false, used: 3 })
      expect(await consume(2)).toEqual({ ok: true, used: 5 })
      const window = windowStart(MINUTE, now)
      expect(await counters().addNamespaceUsage(namespace, 'user 1', MINUTE, window, -2)).toBe(3)
      expect(await counters().addNamespaceUsage(namespace, 'user 1', MINUTE, window, 0)).toBe(3)
      // Another identifier, and the namespace's next window, count apart.
      expect(await counters().addNamespaceUsage(namespace, 'user 2', MINUTE, window, 0)).toBe(0)
      expect(await counters().consumeNamespaceLimit(namespace, 'user 1', 5, MINUTE, 5, window + MINUTE)).toEqual({
        ok: true,
        used: 5,
      })
    })
  })
}
