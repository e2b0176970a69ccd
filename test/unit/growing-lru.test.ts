import { getHeapStatistics } from 'node:v8'
import { LRUCache } from 'lru-cache'
import { describe, expect, it } from 'vitest'
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

  it('passes its other options on (a time to live)', async () => {
    const cache = growingLru<string, true>(10, { ttl: 5, ttlAutopurge: false })
    cache.set('gone', true)
    expect(cache.get('gone')).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(cache.get('gone')).toBeUndefined()
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
})
