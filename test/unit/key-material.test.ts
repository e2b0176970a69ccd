import { createHash } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { generateKey, generateRootKey, hashKey, secretsEqual } from '../../shared/keys/key-material.js'
import { SHARD_COUNT, shardOf } from '../../shared/shards.js'

describe('key material', () => {
  it('hashes as Unkey does: SHA-256, standard base64, 44 characters', () => {
    const key = 'sk_3ZZbJ8a1Xo1r3pvzaJ3XyY'
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('base64'))
    expect(hashKey(key)).toHaveLength(44)
  })

  it('generates prefixed base58 keys with the requested entropy and a display start', () => {
    const { key, hash, start } = generateKey('sk', 16)
    expect(key).toMatch(/^sk_[1-9A-HJ-NP-Za-km-z]{21,22}_[1-9A-HJ-NP-Za-km-z]{6}$/)
    expect(start).toBe(key.slice(0, 7))
    expect(hash).toBe(hashKey(key))
    expect(generateKey(undefined, 255).key.length).toBeGreaterThan(340)
    expect(generateKey(undefined).start).toHaveLength(4)
    expect(new Set(Array.from({ length: 1000 }, () => generateKey('x').key)).size).toBe(1000)
  })

  it('makes root keys that are long and recognisable', () => {
    expect(generateRootKey().key).toMatch(/^kgroot_[1-9A-HJ-NP-Za-km-z]{40,}$/)
  })

  it('compares secrets for equality, whatever their lengths', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true)
    expect(secretsEqual('abc', 'abd')).toBe(false)
    expect(secretsEqual('abc', 'abcd')).toBe(false)
    expect(secretsEqual('', '')).toBe(true)
  })

  it('compares every character of two hashes, wherever they first differ (no early exit)', () => {
    // Pins the loop (key-material.ts): the characters read are the same whether the hashes differ at the first
    // character, at the last, or not at all — how long a comparison takes tells nothing of the bootstrap key's hash.
    const hash = hashKey('kgroot_bootstrap')
    const flip = (i: number) => hash.slice(0, i) + (hash[i] === 'A' ? 'B' : 'A') + hash.slice(i + 1)
    const spy = vi.spyOn(String.prototype, 'charCodeAt')
    try {
      const reads = [hash, flip(0), flip(21), flip(43)].map((other) => {
        spy.mockClear()
        secretsEqual(other, hash)
        return spy.mock.calls.length
      })
      expect(reads).toStrictEqual([88, 88, 88, 88])
    } finally {
      spy.mockRestore()
    }
  })
})

describe('shards', () => {
  it('spreads hashes over every shard, deterministically', () => {
    const counts = new Array<number>(SHARD_COUNT).fill(0)
    for (let i = 0; i < 64_000; i++) counts[shardOf(hashKey(`k${i}`))]!++
    expect(Math.min(...counts)).toBeGreaterThan(800)
    expect(Math.max(...counts)).toBeLessThan(1_200)
    expect(shardOf(hashKey('k1'))).toBe(shardOf(hashKey('k1')))
  })
})
