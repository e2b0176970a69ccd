import { describe, expect, it } from 'vitest'
import { creditNoticeKinds } from '../../shared/credit-notice.js'

describe('creditNoticeKinds', () => {
  it('says low when a balance crosses the threshold going down, exhausted when it reaches 0, nothing going up', () => {
    expect(creditNoticeKinds(10, 5, 5)).toEqual(['low'])
    expect(creditNoticeKinds(5, 4, 5)).toEqual([])
    expect(creditNoticeKinds(10, 6, 5)).toEqual([])
    expect(creditNoticeKinds(10, 0, 5)).toEqual(['low', 'exhausted'])
    expect(creditNoticeKinds(1, 0, undefined)).toEqual(['exhausted'])
    expect(creditNoticeKinds(0, 0, 5)).toEqual([])
    expect(creditNoticeKinds(2, 10, 5)).toEqual([])
  })
})
