import { readFileSync } from 'node:fs'
import bs58 from 'bs58'
import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checksummedKeyPattern, checksumOf, failsChecksum, isChecksummed } from '../../shared/keys/key-checksum.js'
import { generateKey, generateRootKey } from '../../shared/keys/key-material.js'

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
      // Unkey's prefixes may hold `_`: its random part is still last, at least 21 characters.
      expect(failsChecksum(`sk_live_${bs58.encode(randomBytes(16))}`)).toBe(false)
      expect(failsChecksum(`a_b_c_${bs58.encode(randomBytes(16))}`)).toBe(false)
    }
    expect(failsChecksum(generateRootKey().key)).toBe(false)
    expect(failsChecksum('zpka_0123456789abcdef0123456789abcdef_0a1b2c3d')).toBe(false)
    expect(failsChecksum('sk_live_4qJc9ZtWm1Xp7RbE')).toBe(false)
    // A 6-character tail alone is not the format: the random part before it must be 20 base58 characters or more.
    for (const other of ['my_api_key_ABCDEF', `${'A'.repeat(19)}_ABCDEF`, `sk_${'0'.repeat(22)}_ABCDEF`, 'x_ABCDEF'])
      expect(failsChecksum(other), other).toBe(false)
  })

  // createKey takes 1–16 letters or digits, but rerollKey gives the new key the old one's prefix, and an imported key's
  // start (hence its prefix) may hold anything: every key made must be protected, and found by its scanner pattern.
  it('protect keys of any prefix, which the scanner pattern for that prefix finds', () => {
    const prefixes = ['sk_live', 'a'.repeat(17), 'a'.repeat(64), 'clé', '鍵', 'my-co', 'a.b', 'x_', '-x', 'a b', '']
    const check = (prefix: string) => {
      const { key } = generateKey(prefix)
      expect(isChecksummed(key), key).toBe(true)
      expect(failsChecksum(key), key).toBe(false)
      const last = key.at(-1) === 'a' ? 'b' : 'a'
      expect(failsChecksum(key.slice(0, -1) + last), key).toBe(true)
      const at = key.length - 9
      expect(failsChecksum(key.slice(0, at) + (key[at] === 'a' ? 'b' : 'a') + key.slice(at + 1)), key).toBe(true)
      const found = new RegExp(checksummedKeyPattern(prefix), 'g')
      expect(`leaked: ${key}.`.match(found), key).toEqual([key])
    }
    for (const prefix of prefixes) check(prefix)
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 64 }), check))
  })

  it('match the scanner pattern of their own prefix only: the prefix is taken literally', () => {
    const { key } = generateKey('a.b')
    expect(key).toMatch(new RegExp(checksummedKeyPattern('a.b')))
    expect(key.replace('a.b', 'axb')).not.toMatch(new RegExp(checksummedKeyPattern('a.b')))
    expect(generateKey('sk_live').key).not.toMatch(new RegExp(checksummedKeyPattern('sk')))
    expect(generateKey('xsk').key).not.toMatch(new RegExp(checksummedKeyPattern('sk')))
  })

  // What a scanner's validator (GitHub's partner programme asks for one) computes from the docs alone: CRC32 of the
  // UTF-8 text, 6 base58 digits, most significant first, `1` for zero.
  it('are the CRC32 of the UTF-8 text before the checksum, in base58 digits', () => {
    expect(checksumOf('')).toBe('111111')
    expect(checksumOf('sk_4qJc9ZtWm1Xp7RbEa3Kd5N')).toBe('2eAS9S')
    expect(checksumOf('clé_4qJc9ZtWm1Xp7RbEa3Kd5N')).toBe('6fbRLf')
    expect(failsChecksum('sk_4qJc9ZtWm1Xp7RbEa3Kd5N_2eAS9S')).toBe(false)
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
