import { describe, expect, it, vi } from 'vitest'
import type { KeyRecord } from '../../shared/keys/records.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { shardOf } from '../../shared/shards.js'
import { KeyCache } from '../../verifier/key-cache.js'

const record = (hash: string, rev: number, enabled = true): KeyRecord => ({
  id: `key_${rev}`,
  hash,
  apiId: 'api_a',
  start: 'x',
  enabled,
  createdAt: 0,
  rev,
})

describe('KeyCache', () => {
  const options = { maxKeys: 100, maxUnknown: 5, unknownTtlMs: 60_000 }

  it('keeps the newer record: an older read never replaces a newer one', () => {
    const cache = new KeyCache(options)
    cache.offer('h', record('h', 5, false))
    cache.offer('h', record('h', 4, true))
    expect(cache.get('h')).toMatchObject({ rev: 5, enabled: false })
    cache.offer('h', record('h', 6, true))
    expect(cache.get('h')).toMatchObject({ rev: 6, enabled: true })
  })

  it('drops a record when a newer change arrives, keeps it for an older (duplicate) one', () => {
    const cache = new KeyCache(options)
    cache.offer('h', record('h', 5))
    cache.invalidate('h', 5)
    expect(cache.get('h')).toMatchObject({ rev: 5 })
    cache.invalidate('h', 6)
    expect(cache.get('h')).toBeUndefined()
  })

  it('remembers unknown hashes in a bounded cache of their own, forgotten on a change', () => {
    const cache = new KeyCache(options)
    cache.offer('known', record('known', 1))
    for (let i = 0; i < 50; i++) cache.offer(`random${i}`, null)
    expect(cache.get('known')).toMatchObject({ rev: 1 })
    expect(cache.get('random49')).toBeNull()
    expect(cache.get('random0')).toBeUndefined()
    cache.invalidate('random49', 1)
    expect(cache.get('random49')).toBeUndefined()
  })

  it('drops every entry of one shard and only that shard', () => {
    const cache = new KeyCache(options)
    const hashes = Array.from({ length: 50 }, (_, i) => hashKey(`k${i}`))
    hashes.forEach((hash, i) => cache.offer(hash, record(hash, i + 1)))
    const shard = shardOf(hashes[0]!)
    const inShard = hashes.filter((hash) => shardOf(hash) === shard).length
    expect(cache.dropShard(shard)).toBe(inShard)
    for (const hash of hashes) expect(cache.get(hash) === undefined).toBe(shardOf(hash) === shard)
  })

  it('holds at most maxKeys records and maxUnknown hashes, the least recently used going first', () => {
    const cache = new KeyCache({ maxKeys: 3, maxUnknown: 2, unknownTtlMs: 60_000 })
    for (const hash of ['a', 'b', 'c']) cache.offer(hash, record(hash, 1))
    expect(cache.get('a')).toMatchObject({ rev: 1 }) // a is now the most recently used
    cache.offer('d', record('d', 1))
    expect(cache.size).toBe(3)
    expect(['a', 'b', 'c', 'd'].map((hash) => cache.get(hash) !== undefined)).toEqual([true, false, true, true])
    for (const hash of ['x', 'y']) cache.offer(hash, null)
    expect(cache.get('x')).toBeNull() // x is now the most recently used
    cache.offer('z', null)
    expect(['x', 'y', 'z'].map((hash) => cache.get(hash))).toEqual([null, undefined, null])
    expect(cache.size).toBe(3)
  })

  it('forgets an unknown hash unknownTtlMs after it was offered, however often it is asked for', async () => {
    // lru-cache reads the time from performance.now(), and caches a reading for a millisecond (on a timer): both moved
    // by hand.
    let now = performance.now()
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const later = (ms: number) => {
      now += ms
      vi.advanceTimersByTime(ms)
    }
    try {
      const cache = new KeyCache({ maxKeys: 10, maxUnknown: 10, unknownTtlMs: 1_000 })
      cache.offer('x', null)
      later(900)
      expect(cache.get('x')).toBeNull()
      later(90)
      expect(cache.get('x')).toBeNull()
      later(20)
      expect(cache.get('x')).toBeUndefined()
    } finally {
      vi.useRealTimers()
      clock.mockRestore()
    }
  })
})
