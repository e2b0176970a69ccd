import { describe, expect, it } from 'vitest'
import { entityAddress, entityShard } from '../../shared/entity.js'
import { EntityCache } from '../../verifier/entity-cache.js'

describe('the verifier’s entity cache', () => {
  const address = entityAddress('role', 'role_a')

  it('remembers absence until a change for the address, and keeps the newer of two reads', () => {
    const cache = new EntityCache(100)
    expect(cache.get(address)).toBeUndefined()
    cache.offer(address, null)
    expect(cache.get(address)).toBeNull()
    cache.invalidate(address, 1)
    expect(cache.get(address)).toBeUndefined()
    cache.offer(address, { doc: { v: 'new' }, rev: 5 })
    cache.offer(address, { doc: { v: 'old' }, rev: 3 })
    expect(cache.get(address)).toEqual({ v: 'new' })
    // An event older than what is held changes nothing but the generation.
    const generation = cache.generation
    cache.invalidate(address, 4)
    expect(cache.get(address)).toEqual({ v: 'new' })
    expect(cache.generation).toBeGreaterThan(generation)
  })

  it('drops a shard’s entities (and only them) when its log cannot be replayed', () => {
    const cache = new EntityCache(100)
    const other = Array.from({ length: 200 }, (_, i) => entityAddress('permission', `perm_${i}`)).find(
      (a) => entityShard(a) !== entityShard(address),
    )!
    cache.offer(address, { doc: 1, rev: 1 })
    cache.offer(other, { doc: 2, rev: 1 })
    const epoch = cache.epoch
    expect(cache.dropShard(entityShard(address))).toBe(1)
    expect(cache.get(address)).toBeUndefined()
    expect(cache.get(other)).toBe(2)
    expect(cache.epoch).toBeGreaterThan(epoch)
  })

  it('holds at most its entries, the least recently used going first', () => {
    const cache = new EntityCache(3)
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => entityAddress('role', `role_${id}`))
    for (const address of [a, b, c]) cache.offer(address!, { doc: address, rev: 1 })
    expect(cache.get(a!)).toBe(a) // a is now the most recently used
    cache.offer(d!, null)
    expect(cache.size).toBe(3)
    expect([a, b, c, d].map((address) => cache.get(address!))).toEqual([a, undefined, c, null])
  })
})
