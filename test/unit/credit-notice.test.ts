import { describe, expect, it } from 'vitest'
import { parseChangeEvent } from '../../shared/change-event.js'
import { creditNoticeKinds, parseCreditNoticeHint } from '../../shared/keys/credit-notice.js'

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

describe('parseCreditNoticeHint', () => {
  it("reads the shard of the credit scripts' hint, which is no change event; anything else is none", () => {
    const hint = '{"v":1,"notice":17}'
    expect(parseCreditNoticeHint(hint)).toBe(17)
    expect(parseChangeEvent(hint)).toBeUndefined()
    const change = '{"v":1,"shard":3,"epoch":"e","rev":4,"kind":"created","keyId":"k","hash":"h","apiId":"a"}'
    expect(parseCreditNoticeHint(change)).toBeUndefined()
    for (const other of ['', 'null', '{"v":2,"notice":1}', '{"v":1,"notice":"1"}', '{"v":1,"notice":1.5}', '[1]'])
      expect(parseCreditNoticeHint(other), other).toBeUndefined()
  })
})
