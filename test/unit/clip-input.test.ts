import { describe, expect, it } from 'vitest'
import { clipInput } from '../../shared/clip-input.js'

describe('clipInput', () => {
  it('keeps text up to the limit whole, and cuts longer text with an ellipsis', () => {
    expect(clipInput('a'.repeat(60))).toBe('a'.repeat(60))
    expect(clipInput('a'.repeat(61))).toBe(`${'a'.repeat(60)}…`)
    expect(clipInput('abcdef', 3)).toBe('abc…')
  })

  it('never cuts a surrogate pair in two', () => {
    // '😀' is two UTF-16 units: at the limit, the pair is left out rather than halved.
    expect(clipInput(`ab😀cd`, 3)).toBe('ab…')
    expect(clipInput(`ab😀cd`, 4)).toBe('ab😀…')
  })
})
