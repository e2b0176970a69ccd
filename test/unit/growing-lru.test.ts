import { getHeapStatistics } from 'node:v8'
import { LRUCache } from 'lru-cache'
import { describe, expect, it, vi } from 'vitest'
import { growingLru } from '../../verifier/growing-lru.js'

describe('growingLru', () => {
  it('holds at most its entries, evicting the least recently used (and telling dispose)', () => {
    const evicted: string[] = []
    const cache = growingLru<string, number>(3, { dispose: (_value, key, reason) => evicted.push(`${key} ${reason}`) })
    for (const key of ['a', 'b', 'c']) cache.set(key, 1)
    expect(cache.get('a')).toBe(1) // a is now the most recently used
    cache.set('d', 1)
    expect(cache.size).toBe(3)
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd'])
    expect(evicted).toEqual(['b evict'])
    for (let i = 0; i < 100; i++) cache.set(`k${i}`, i)
    expect(cache.size).toBe(3)
    expect([...cache.keys()].sort()).toEqual(['k97', 'k98', 'k99'])
  })

  it('passes its other options on (a time to live)', () => {
    // lru-cache reads the time from performance.now(), and caches a reading for a millisecond (on a timer): both moved
    // by hand.
    let now = performance.now()
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const cache = growingLru<string, true>(10, { ttl: 5, ttlAutopurge: false })
      cache.set('gone', true)
      expect(cache.get('gone')).toBe(true)
      now += 20
      vi.advanceTimersByTime(20)
      expect(cache.get('gone')).toBeUndefined()
    } finally {
      vi.useRealTimers()
      clock.mockRestore()
    }
  })

  // The point of it: a cache bounded by `max` allocates its slots when it is made (here ~32 MB for 2,000,000), which
  // grew the verifier's young generation to its maximum; this one allocates as it fills.
  it('allocates nothing up front for its bound, where lru-cache with `max` does', () => {
    // Each cache is kept until the end: a collection freeing an earlier one while the next is made would hide it.
    const kept: unknown[] = []
    const heapGrowth = (make: () => unknown) => {
      const before = getHeapStatistics().used_heap_size
      kept.push(make())
      return getHeapStatistics().used_heap_size - before
    }
    const growing = heapGrowth(() => growingLru(2_000_000))
    const preallocated = heapGrowth(() => new LRUCache({ max: 2_000_000 }))
    expect(preallocated).toBeGreaterThan(16 * 1024 * 1024)
    expect(growing).toBeLessThan(1024 * 1024)
    expect(kept).toHaveLength(2)
  })

  it('keeps its own bound, whatever options it is given', () => {
    // GrowingLruOptions leaves the bound out, but an object of lru-cache's own options type passes for one.
    const wide: LRUCache.Options<string, number, unknown> = { maxSize: 100, sizeCalculation: () => 1 }
    const cache = growingLru<string, number>(3, wide)
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, i)
    expect([...cache.keys()]).toEqual(['k9', 'k8', 'k7'])
  })

  // Against lru-cache bounded by `max`, by a seeded random run of everything the verifier does with its caches (and
  // a little more): the same entries in the same order after every step, the same answers, the same disposals.
  it('behaves as lru-cache with `max` does, step by step', () => {
    let seed = 1
    const random = () => {
      // mulberry32
      let t = (seed = (seed + 0x6d2b79f5) | 0)
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
    }
    for (const ttl of [0, 50]) {
      for (const entries of [1, 3, 12]) {
        for (let run = 0; run < 3; run++) {
          let now = 1_000
          const perf = { now: () => now }
          const disposed: [string[], string[]] = [[], []]
          const options = (log: string[]) => ({
            ttl,
            ttlAutopurge: false,
            perf,
            dispose: (value: number, key: string, reason: string) => log.push(`${key}=${value} ${reason}`),
          })
          const expected = new LRUCache<string, number>({ max: entries, ...options(disposed[0]) })
          const cache = growingLru<string, number>(entries, options(disposed[1]))
          for (let step = 0; step < 600; step++) {
            const key = `k${Math.floor(random() * entries * 2 + 1)}`
            const op = random()
            const both = (f: (c: LRUCache<string, number>) => unknown) => [f(cache), f(expected)]
            const [got, want] =
              op < 0.4
                ? both((c) => c.set(key, Math.floor(op * 10) % 3) === c)
                : op < 0.6
                  ? both((c) => c.get(key))
                  : op < 0.7
                    ? both((c) => c.peek(key))
                    : op < 0.75
                      ? both((c) => c.has(key))
                      : op < 0.87
                        ? both((c) => c.delete(key))
                        : op < 0.88
                          ? both((c) => c.clear())
                          : op < 0.92
                            ? both((c) => c.purgeStale())
                            : op < 0.95
                              ? both((c) => {
                                  // Deleting while iterating, as the rate limiters' reconcile does.
                                  for (const [id, value] of c.entries()) if (value === 0) c.delete(id)
                                })
                              : [(now += Math.floor(random() * 40)), 0]
            if (op < 0.95) expect(got, `step ${step}`).toEqual(want)
            expect([...cache.entries()], `step ${step}`).toEqual([...expected.entries()])
            expect([...cache.rkeys()]).toEqual([...expected.rkeys()])
            expect(cache.size).toBe(expected.size)
            expect(disposed[1]).toEqual(disposed[0])
          }
          expect(disposed[0].some((line) => line.endsWith('evict'))).toBe(true)
        }
      }
    }
  })
})
