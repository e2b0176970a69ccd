import { describe, expect, it } from 'vitest'
import { idTimestamp, newId } from '../../shared/ids.js'

describe('ids', () => {
  it('have the prefix, a fixed-width base58 body, and sort by creation time', () => {
    const ids = [0, 1, 1_000, 1_700_000_000_000, 1_800_000_000_000].map((ms) => newId('key', ms))
    for (const id of ids) expect(id).toMatch(/^key_[1-9A-HJ-NP-Za-km-z]{22}$/)
    expect([...ids].sort()).toEqual(ids)
  })

  it('carry their creation time', () => {
    expect(idTimestamp(newId('api', 1_795_000_000_123))).toBe(1_795_000_000_123)
    expect(idTimestamp('key_short')).toBeUndefined()
    expect(idTimestamp('nonsense')).toBeUndefined()
  })

  it('made in one millisecond by one process, sort in the order they were made (and keep their time)', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('rlor', 1_795_000_000_000))
    expect([...ids].sort()).toEqual(ids)
    for (const id of ids) expect(idTimestamp(id)).toBe(1_795_000_000_000)
    // The next millisecond starts afresh, still after them.
    const later = newId('rlor', 1_795_000_000_001)
    expect(later > ids.at(-1)!).toBe(true)
  })

  it('are unique', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('req', 5)))
    expect(ids.size).toBe(10_000)
  })
})
