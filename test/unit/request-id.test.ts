import { describe, expect, it } from 'vitest'
import { countUp, newRequestId } from '../../shared/http/request-id.js'

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const ID = /^req_[1-9A-HJ-NP-Za-km-z]{22}$/

/** The counter part of an id (its last 10 digits) as a number. */
const counterOf = (id: string) => [...id.slice(-10)].reduce((n, digit) => n * 58 + BASE58.indexOf(digit), 0)

describe('request ids', () => {
  it('are 22 base58 digits after req_, one process prefix, counting up by one across every carry', () => {
    const first = newRequestId()
    expect(first).toMatch(ID)
    let previous = counterOf(first)
    const seen = new Set([first])
    // Past 58² ids: the two lowest digits carry over many times.
    for (let i = 0; i < 58 * 58 * 3; i++) {
      const id = newRequestId()
      expect(id).toMatch(ID)
      expect(id.slice(0, 16)).toBe(first.slice(0, 16))
      expect(counterOf(id)).toBe(previous + 1)
      previous = counterOf(id)
      seen.add(id)
    }
    expect(seen.size).toBe(58 * 58 * 3 + 1)
  })

  it('carries across all ten counter digits, and never into the prefix', () => {
    const counted = (text: string) => {
      const buffer = Buffer.from(text, 'latin1')
      countUp(buffer, 10)
      return buffer.toString('latin1')
    }
    expect(counted('req_PREFIX1111111111')).toBe('req_PREFIX1111111112')
    expect(counted('req_PREFIX111111111z')).toBe('req_PREFIX1111111121')
    expect(counted('req_PREFIX1zzzzzzzzz')).toBe('req_PREFIX2111111111')
    expect(counted('req_PREFIXHzzzzzzzzz')).toBe('req_PREFIXJ111111111')
    // Past 58^10 ids (never reached) the counter wraps: the prefix stays the process's.
    expect(counted('req_PREFIXzzzzzzzzzz')).toBe('req_PREFIX1111111111')
  })
})
