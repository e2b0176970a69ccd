import { describe, expect, it } from 'vitest'
import { changedNames } from '../../control-plane/webhooks/events/event-payloads.js'
import { changedKeyFields } from '../../shared/keys/key-changes.js'
import type { NewKeyRecord } from '../../shared/keys/records.js'

const KEY: NewKeyRecord = {
  id: 'key_1',
  hash: 'h',
  apiId: 'api_1',
  start: 'kg_ab',
  enabled: true,
  meta: { plan: 'pro' },
  createdAt: 1,
}

describe('changedKeyFields', () => {
  it('names the fields whose values differ, set or cleared, sorted, and never bookkeeping', () => {
    const after: NewKeyRecord = { ...KEY, enabled: false, expires: 5, updatedAt: 9 }
    delete after.meta
    expect(changedKeyFields(KEY, after)).toEqual(['enabled', 'expires', 'meta'])
  })

  it('compares by value: an equal object written again is no change', () => {
    expect(changedKeyFields(KEY, { ...KEY, meta: { plan: 'pro' }, updatedAt: 2 })).toEqual([])
    expect(changedKeyFields(KEY, { ...KEY, meta: { plan: 'team' } })).toEqual(['meta'])
  })

  it("never names a portal roll's claim on the key: the roll is news of the new key (key.rerolled)", () => {
    expect(changedKeyFields(KEY, { ...KEY, replacedBy: 'key_2' })).toEqual([])
    expect(changedKeyFields(KEY, { ...KEY, replacedBy: 'key_2', expires: 5 })).toEqual(['expires'])
  })
})

describe('changedNames', () => {
  it("maps record fields to the API's names, each once", () => {
    expect(
      changedNames(['refill', 'remaining', 'creditsLowThreshold', 'permissionIds', 'roleIds', 'ownerId', 'enabled']),
    ).toEqual(['credits', 'enabled', 'identity', 'permissions', 'roles'])
  })
})
