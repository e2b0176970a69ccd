import { describe, expect, it } from 'vitest'
import { parseChangeEvent } from '../../shared/change-event.js'
import { wallMicros } from '../../shared/clock.js'

const event = { v: 1, shard: 3, epoch: 'e1', rev: 7, kind: 'updated', keyId: 'key_1', hash: 'h', apiId: 'api_1' }

describe('change events', () => {
  it('keeps a well-formed publish time and drops a malformed one without dropping the change', () => {
    expect(parseChangeEvent(JSON.stringify({ ...event, at: 1_763_812_345_678_123 }))).toEqual({
      ...event,
      at: 1_763_812_345_678_123,
    })
    expect(parseChangeEvent(JSON.stringify({ ...event, at: 'soon' }))).toEqual(event)
    expect(parseChangeEvent(JSON.stringify(event))).toEqual(event)
    expect(parseChangeEvent(JSON.stringify({ ...event, rev: 'x' }))).toBeUndefined()
  })

  it('tells wall time in microseconds, finer than Date.now() and within its rounding', () => {
    const samples = Array.from({ length: 2_000 }, () => {
      const before = Date.now()
      const micros = wallMicros()
      const after = Date.now()
      return { before, micros, after }
    })
    for (const { before, micros, after } of samples) {
      expect(micros).toBeGreaterThanOrEqual(before * 1000 - 1_000)
      expect(micros).toBeLessThanOrEqual((after + 2) * 1000)
    }
    // Sub-millisecond resolution: within one millisecond the values are not all the same.
    expect(new Set(samples.map((s) => s.micros % 1000)).size).toBeGreaterThan(10)
  })
})
