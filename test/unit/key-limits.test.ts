import { describe, expect, it } from 'vitest'
import type { IdentityRecord } from '../../shared/identity.js'
import { keyLimitsOf } from '../../shared/keys/key-limits.js'

const identity = (ratelimits: IdentityRecord['ratelimits']): IdentityRecord => ({
  id: 'id_1',
  externalId: 'acme',
  ratelimits,
  createdAt: 0,
})

describe('a key’s limits, resolved once per key and identity', () => {
  it('is nothing for a key with no limits and no identity', () => {
    expect(keyLimitsOf({ hash: 'h' }, undefined)).toBeUndefined()
  })

  it('counts the key’s limits on the key and the identity’s on the identity, all in the identity’s group', () => {
    const limits = keyLimitsOf(
      {
        hash: 'h',
        ratelimit: { limit: 5, duration: 1_000 },
        ratelimits: [{ name: 'mine', limit: 1, duration: 1_000 }],
      },
      identity([{ name: 'shared', limit: 9, duration: 1_000 }]),
    )!
    expect(limits.group).toBe('id_1')
    expect(limits.adHocOwner).toBe('id_1')
    expect(limits.byName.get('default')).toMatchObject({ owner: 'h', limit: 5, async: true })
    expect(limits.byName.get('mine')).toMatchObject({ owner: 'h', async: false })
    expect(limits.byName.get('shared')).toMatchObject({ owner: 'id_1', limit: 9, async: false })
  })

  it('takes the key’s limit over the identity’s of the same name, autoApply included', () => {
    const limits = keyLimitsOf(
      { hash: 'h', ratelimits: [{ name: 'calls', limit: 1, duration: 1_000 }] },
      identity([
        { name: 'calls', limit: 100, duration: 1_000, autoApply: true },
        { name: 'always', limit: 3, duration: 1_000, autoApply: true },
      ]),
    )!
    expect(limits.byName.get('calls')).toMatchObject({ owner: 'h', limit: 1 })
    expect(limits.auto.map((limit) => [limit.name, limit.owner, limit.cost])).toEqual([['always', 'id_1', 1]])
  })

  it('applies the key’s own ratelimit first, as `default`, then its named auto-applied limits', () => {
    const limits = keyLimitsOf(
      {
        hash: 'h',
        ratelimit: { limit: 5, duration: 1_000, async: false },
        ratelimits: [{ name: 'tokens', limit: 1, duration: 1_000, autoApply: true, async: true }],
      },
      undefined,
    )!
    expect(limits.group).toBe('h')
    expect(limits.auto).toEqual([
      { name: 'default', limit: 5, duration: 1_000, async: false, owner: 'h', autoApply: true, cost: 1 },
      { name: 'tokens', limit: 1, duration: 1_000, async: true, owner: 'h', autoApply: true, cost: 1 },
    ])
  })
})
