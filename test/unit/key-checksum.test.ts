import { readFileSync } from 'node:fs'
import bs58 from 'bs58'
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { checksummedKeyPattern, checksumOf, failsChecksum } from '../../shared/key-checksum.js'
import { generateKey, generateRootKey } from '../../shared/key-material.js'

describe('checksummed keys', () => {
  it('are made as <prefix>_<random>_<6 characters of CRC32>, and pass their own check', () => {
    for (const prefix of ['sk', 'live', undefined]) {
      const { key, start } = generateKey(prefix)
      expect(key).toMatch(prefix ? new RegExp(checksummedKeyPattern(prefix)) : /^[1-9A-HJ-NP-Za-km-z]{20,}_\w{6}$/)
      expect(failsChecksum(key)).toBe(false)
      expect(key.startsWith(start)).toBe(true)
    }
  })

  it('refuse a typo, a changed checksum and a random string of the right shape', () => {
    const { key } = generateKey('sk')
    const body = key.slice(0, -7)
    const typo = body.slice(0, 5) + (body[5] === 'a' ? 'b' : 'a') + body.slice(6) + key.slice(-7)
    expect(failsChecksum(typo)).toBe(true)
    expect(failsChecksum(`${body}_${checksumOf('something else')}`)).toBe(true)
    const guesses = Array.from({ length: 1_000 }, () => `sk_${bs58.encode(randomBytes(16))}_${'x'.repeat(6)}`)
    expect(guesses.filter(failsChecksum)).toHaveLength(1_000)
  })

  it('leave keys of other shapes to the lookup: older Keygate keys, Unkey keys, root keys, anything imported', () => {
    for (let i = 0; i < 1_000; i++) {
      expect(failsChecksum(`sk_${bs58.encode(randomBytes(16))}`)).toBe(false)
      expect(failsChecksum(bs58.encode(randomBytes(16)))).toBe(false)
    }
    expect(failsChecksum(generateRootKey().key)).toBe(false)
    expect(failsChecksum('zpka_0123456789abcdef0123456789abcdef_0a1b2c3d')).toBe(false)
    expect(failsChecksum('sk_live_4qJc9ZtWm1Xp7RbE')).toBe(false)
  })

  it('encodes the CRC32 at a fixed width, so every checksum is 6 characters', () => {
    for (const text of ['', 'a', 'sk_x', 'x'.repeat(300)]) expect(checksumOf(text)).toMatch(/^[1-9A-HJ-NP-Za-km-z]{6}$/)
  })

  it('are described in docs/api.md with the regular expression a scanner needs', () => {
    const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')
    expect(docs).toContain(checksummedKeyPattern('sk'))
    expect(generateKey('sk').key).toMatch(new RegExp(checksummedKeyPattern('sk')))
  })
})
