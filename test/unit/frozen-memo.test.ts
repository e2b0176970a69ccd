import { describe, expect, it } from 'vitest'
import { frozenWithMemo, memoOf } from '../../shared/frozen-memo.js'

// What a consumer keeps in a memo is derived from the value it is on (a serialised answer, a gateway answer): another
// value, or a copy that may differ (a verdict spread with a field added), finding it would be answered as this one.
describe('frozenWithMemo', () => {
  it('gives each value a memo of its own, which its copies, its JSON and merely frozen values do not have', () => {
    const first = frozenWithMemo({ valid: true, code: 'VALID' })
    const second = frozenWithMemo({ valid: true, code: 'VALID' })
    expect(Object.isFrozen(first)).toBe(true)
    expect(memoOf(first)).toBeDefined()
    expect(memoOf(first)).not.toBe(memoOf(second))
    expect(memoOf({ ...first, remaining: 1 })).toBeUndefined()
    expect(memoOf(Object.assign({}, first))).toBeUndefined()
    expect(memoOf(Object.freeze({ valid: true, code: 'VALID' }))).toBeUndefined()
    expect(JSON.stringify(first)).toBe('{"valid":true,"code":"VALID"}')
  })
})
