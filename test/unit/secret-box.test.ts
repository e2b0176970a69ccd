import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseSealingKeys, SecretBox, SecretBoxError } from '../../shared/secrets/secret-box.js'

const key = (id: string) => ({ id, key: randomBytes(32) })
const reason = (open: () => unknown) => {
  try {
    open()
  } catch (err) {
    return err instanceof SecretBoxError ? err.reason : `not a SecretBoxError: ${String(err)}`
  }
  return 'opened'
}

describe('secrets sealed at rest', () => {
  it('opens what it sealed for the same context, and keeps nothing of the secret readable', () => {
    const box = new SecretBox([key('k1')])
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string(), (plain, context) => {
        const sealed = box.seal(plain, context)
        expect(box.open(sealed, context)).toBe(plain)
        if (plain.length >= 4) expect(sealed).not.toContain(plain)
      }),
      { seed: 20261130, numRuns: 300 },
    )
    // A fresh IV each time: the same secret twice is two different values.
    expect(box.seal('sk_live_x', 'a')).not.toBe(box.seal('sk_live_x', 'a'))
  })

  it('refuses a value moved to another record, damaged anywhere, or cut short', () => {
    const k1 = key('k1')
    const box = new SecretBox([k1])
    const sealed = box.seal('sk_live_secret', 'whep_1')
    expect(reason(() => box.open(sealed, 'whep_2'))).toBe('damaged')
    const [format, id, iv, body] = sealed.split('.') as [string, string, string, string]
    const flip = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url')
      bytes[at] = bytes[at]! ^ 1
      return bytes.toString('base64url')
    }
    expect(reason(() => box.open([format, id, flip(iv, 0), body].join('.'), 'whep_1'))).toBe('damaged')
    for (let at = 0; at < Buffer.from(body, 'base64url').length; at++)
      expect(reason(() => box.open([format, id, iv, flip(body, at)].join('.'), 'whep_1'))).toBe('damaged')
    expect(reason(() => box.open([format, id, iv, body.slice(0, 10)].join('.'), 'whep_1'))).toBe('damaged')
    expect(reason(() => box.open(['kgs0', id, iv, body].join('.'), 'whep_1'))).toBe('damaged')
    expect(reason(() => box.open(`${sealed}.x`, 'whep_1'))).toBe('damaged')
    expect(reason(() => box.open('sk_live_secret', 'whep_1'))).toBe('damaged')
    // The key id is bound too: the same key under another id does not open it.
    const both = new SecretBox([k1, { id: 'k2', key: k1.key }])
    expect(both.open(sealed, 'whep_1')).toBe('sk_live_secret')
    expect(reason(() => both.open([format, 'k2', iv, body].join('.'), 'whep_1'))).toBe('damaged')
  })

  it('rotates: the first key seals, every key opens, and a key no longer configured is said so', () => {
    const [old, next] = [key('old'), key('next')]
    const sealed = new SecretBox([old]).seal('lago_key', 'whep_1')
    const rotating = new SecretBox([next, old])
    expect(rotating.open(sealed, 'whep_1')).toBe('lago_key')
    expect(rotating.sealedWithOlderKey(sealed)).toBe(true)
    const resealed = rotating.seal(rotating.open(sealed, 'whep_1'), 'whep_1')
    expect(rotating.sealedWithOlderKey(resealed)).toBe(false)
    const rotated = new SecretBox([next])
    expect(rotated.open(resealed, 'whep_1')).toBe('lago_key')
    expect(reason(() => rotated.open(sealed, 'whep_1'))).toBe('unknown-key')
  })

  it('reads ENCRYPTION_KEYS, saying what is wrong without the keys', () => {
    const [a, b] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')]
    const keys = parseSealingKeys(`k2:${b}, k1:${a}`)
    expect(Array.isArray(keys) && keys.map((k) => [k.id, k.key.toString('base64')])).toEqual([
      ['k2', b],
      ['k1', a],
    ])
    const short = randomBytes(16).toString('base64')
    for (const [raw, said] of [
      [`k1:${short}`, 'the key k1 is not 32 bytes'],
      [b, 'entry 1 is not <id>:<key>'],
      [`k1:${a},bad id:${b}`, 'entry 2 is not <id>:<key>'],
      [`k1:${a},k1:${b}`, 'the id k1 is given twice'],
    ]) {
      const problem = parseSealingKeys(raw!)
      expect(problem).toContain(said)
      for (const secret of [a, b, short]) expect(problem).not.toContain(secret)
    }
    expect(() => new SecretBox([])).toThrow('needs a key')
    expect(() => new SecretBox([{ id: 'k', key: randomBytes(16) }])).toThrow('not 32 bytes')
  })
})
