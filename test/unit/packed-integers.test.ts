import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LARGEST_PACKED, PackedIntegersWriter, unpackIntegers } from '../../shared/analytics/packed-integers.js'

const packed = (values: number[], initialBytes?: number) => {
  const writer = new PackedIntegersWriter(initialBytes)
  for (const value of values) writer.write(value)
  return writer.take()
}

describe('packed integers', () => {
  it('gives back every integer within ±LARGEST_PACKED, in order, whatever the mix of sizes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -200, max: 5_000 }), fc.integer(), fc.maxSafeInteger())),
        fc.integer({ min: 1, max: 64 }),
        (values, initialBytes) => {
          const exact = values.map((value) => Math.max(-LARGEST_PACKED, Math.min(LARGEST_PACKED, value)))
          expect(unpackIntegers(packed(exact, initialBytes))).toEqual(exact)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('holds the edges of the 32-bit fast path and of the exact range', () => {
    const edges = [
      0,
      -1,
      1,
      63,
      -64,
      64,
      127,
      128,
      2 ** 30 - 1,
      -(2 ** 30),
      2 ** 30,
      -(2 ** 30) - 1,
      2 ** 31,
      -(2 ** 31),
    ]
    const exact = [...edges, LARGEST_PACKED, -LARGEST_PACKED, 2 ** 40 + 3, -(2 ** 45) - 7]
    expect(unpackIntegers(packed(exact))).toEqual(exact)
  })

  it('takes small magnitudes of either sign in one byte, a row of small numbers in eight', () => {
    expect(Buffer.from(packed([63, -64]), 'base64')).toHaveLength(2)
    expect(Buffer.from(packed([64]), 'base64')).toHaveLength(2)
    // A verification row as recorded: offset, key index, outcome, source, credits, no tags, latency in µs.
    expect(Buffer.from(packed([1_250, 37, 0, 1, 0, -1, 18]), 'base64')).toHaveLength(8)
  })

  it('rounds what is not an integer, writes NaN as 0 and holds larger magnitudes at the bound, with their sign', () => {
    expect(unpackIntegers(packed([1.4, 1.6, -2.5, Number.NaN, 2 ** 60, -Infinity]))).toEqual([
      1,
      2,
      -2,
      0,
      LARGEST_PACKED,
      -LARGEST_PACKED,
    ])
  })

  it('starts over after a take, keeping nothing of the values before', () => {
    const writer = new PackedIntegersWriter(2)
    for (let i = 0; i < 1_000; i++) writer.write(i * 1_000)
    writer.take()
    expect(writer.empty).toBe(true)
    writer.write(5)
    expect(unpackIntegers(writer.take())).toEqual([5])
    expect(writer.take()).toBe('')
  })

  it('refuses packed text that ends inside a value or holds one longer than any it writes', () => {
    const cut = Buffer.from(packed([300]), 'base64')
      .subarray(0, 1)
      .toString('base64')
    expect(() => unpackIntegers(cut)).toThrow(/inside a value/)
    expect(() => unpackIntegers(Buffer.alloc(9, 0x80).toString('base64'))).toThrow(/too long/)
    // Nine bytes, ended: longer than any value written.
    const bytes = (...values: number[]) => Buffer.from(values).toString('base64')
    expect(() => unpackIntegers(bytes(...Array<number>(8).fill(0x80), 0x01))).toThrow(/too long/)
    expect(() => unpackIntegers(bytes(...Array<number>(8).fill(0x80), 0x00))).toThrow(/too long/)
    // Eight bytes, but more than 53 bits: past any value written, and past what a double holds (-(2^55) would read as
    // +2^55). The largest written still reads.
    expect(() => unpackIntegers(bytes(...Array<number>(7).fill(0xff), 0x7f))).toThrow(/too long/)
    expect(() => unpackIntegers(bytes(...Array<number>(7).fill(0x80), 0x10))).toThrow(/too long/)
    expect(unpackIntegers(packed([LARGEST_PACKED, -LARGEST_PACKED]))).toEqual([LARGEST_PACKED, -LARGEST_PACKED])
    expect(unpackIntegers('')).toEqual([])
  })
})
