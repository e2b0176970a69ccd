import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compactRows, insertParts } from '../../control-plane/analytics/engine/insert-parts.js'

const rows = (...sizes: number[]) => sizes.map((size, i) => ({ i, pad: 'x'.repeat(size) }))
const lineOf = (row: { i: number; pad: string }) => JSON.stringify([row.i, row.pad])
const linesOf = (batch: readonly object[]) => compactRows(batch).lines

describe('compactRows', () => {
  it("writes each row's values in the first row's columns' order, whatever order its fields are in", () => {
    expect(
      compactRows([
        { a: 1, b: 'x' },
        { b: 'y', a: 2 },
      ]),
    ).toEqual({ columns: ['a', 'b'], lines: ['[1,"x"]', '[2,"y"]'] })
    expect(compactRows([])).toEqual({ columns: [], lines: [] })
  })

  it('leaves rows written compact already as they are', () => {
    const written = { columns: ['a'], lines: ['[1]'] }
    expect(compactRows(written)).toBe(written)
  })
})

describe('insertParts', () => {
  it('is one part under the batch id when the rows fit', () => {
    const batch = rows(10, 10, 10)
    expect([...insertParts(linesOf(batch), 'ab0:1-0:2-0:v', 1_000)]).toEqual([
      { text: batch.map(lineOf).join('\n'), token: 'ab0:1-0:2-0:v' },
    ])
    expect([...insertParts([], 'none', 1_000)]).toEqual([])
  })

  it('splits rows into parts within the bound, in order, each under a token of its own, the same every time', () => {
    const batch = rows(10, 10, 10, 100, 10)
    const line = lineOf(batch[0]!).length
    // Two short rows and their newline fit; a third does not; the long row is a part by itself.
    const parts = [...insertParts(linesOf(batch), 'b', 2 * line + 1)]
    expect(parts.map(({ text }) => text.split('\n').map((text) => (JSON.parse(text) as [number, string])[0]))).toEqual([
      [0, 1],
      [2],
      [3],
      [4],
    ])
    expect(parts.map(({ token }) => token)).toEqual(['b', 'b:1', 'b:2', 'b:3'])
    for (const { text } of parts.filter((_, i) => i !== 2)) expect(text.length).toBeLessThanOrEqual(2 * line + 1)
    expect([...insertParts(linesOf(batch), 'b', 2 * line + 1)]).toEqual(parts)
  })

  it('fills each part as far as the bound allows, counting the newlines: a retry must cut the same parts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 60 }),
        (sizes, maxChars) => {
          const lines = sizes.map((size) => 'x'.repeat(size))
          const parts = [...insertParts(lines, 't', maxChars)].map(({ text }) => text)
          expect(parts.join('\n')).toBe(lines.join('\n'))
          for (const [i, text] of parts.entries()) {
            // Within the bound, unless a line alone is longer; and the next part's first line would not have fitted.
            if (text.includes('\n')) expect(text.length).toBeLessThanOrEqual(maxChars)
            const next = parts[i + 1]?.split('\n')[0]
            if (next !== undefined) expect(text.length + 1 + next.length).toBeGreaterThan(maxChars)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
