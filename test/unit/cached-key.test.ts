import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { KeyRecord } from '../../shared/keys/records.js'
import { verify } from '../../shared/verification/verification.js'
import { EMPTY_CONTEXT } from '../../shared/keys/key-context.js'
import { toCachedKey } from '../../verifier/cached-key.js'

/**
 * Every field a key record can carry, each present or absent. The compiler holds the list to KeyRecord: a field added
 * there and not generated here fails to compile, so that toCachedKey (which copies field by field) is tested on it.
 */
const fields = {
  id: fc.string({ minLength: 1 }),
  hash: fc.string({ minLength: 1 }),
  apiId: fc.constantFrom('api_a', 'api_b'),
  start: fc.string(),
  name: fc.string(),
  ownerId: fc.string(),
  meta: fc.dictionary(fc.string(), fc.jsonValue()),
  expires: fc.integer({ min: 0, max: 2e12 }),
  remaining: fc.nat(),
  refill: fc.record({
    interval: fc.constantFrom('daily', 'monthly'),
    amount: fc.nat(),
    refillDay: fc.integer({ min: 1, max: 31 }),
  }),
  ratelimit: fc.record({ limit: fc.integer({ min: 1 }), duration: fc.integer({ min: 1000 }), async: fc.boolean() }),
  ratelimits: fc.array(
    fc.record(
      {
        name: fc.string({ minLength: 1 }),
        limit: fc.integer({ min: 1 }),
        duration: fc.integer({ min: 1000 }),
        autoApply: fc.boolean(),
        async: fc.boolean(),
      },
      { requiredKeys: ['name', 'limit', 'duration'] },
    ),
  ),
  creditsLowThreshold: fc.integer({ min: 1 }),
  environment: fc.string(),
  permissionIds: fc.array(fc.string()),
  roleIds: fc.array(fc.string()),
  ipAllowlist: fc.array(fc.constantFrom('10.0.0.0/8', '127.0.0.1/32', '2001:db8::/32'), { minLength: 1 }),
  usageThresholds: fc.array(
    fc.record({
      measure: fc.constantFrom('billable', 'credits'),
      period: fc.constantFrom('day', 'month'),
      value: fc.integer({ min: 1 }),
    }),
    { minLength: 1 },
  ),
  enabled: fc.boolean(),
  rerolledFrom: fc.string(),
  replacedBy: fc.string(),
  leaked: fc.record(
    {
      at: fc.nat(),
      url: fc.webUrl(),
      source: fc.string(),
      reporter: fc.string(),
      action: fc.constantFrom('notify', 'disable', 'delete'),
    },
    { requiredKeys: ['at', 'reporter', 'action'] },
  ),
  createdAt: fc.nat(),
  updatedAt: fc.nat(),
  rev: fc.integer({ min: 1 }),
} satisfies Record<keyof KeyRecord, fc.Arbitrary<unknown>>
const records: fc.Arbitrary<KeyRecord> = fc.record(fields, {
  requiredKeys: ['id', 'hash', 'apiId', 'start', 'enabled', 'createdAt', 'rev'],
})

describe('the lean copy a verifier caches', () => {
  it('keeps every field but start, createdAt, updatedAt, rerolledFrom, replacedBy, leaked and usageThresholds, and verifies exactly as the full record', () => {
    fc.assert(
      fc.property(
        records,
        fc.integer({ min: 0, max: 2e12 }),
        fc.option(fc.constantFrom('api_a', 'api_b'), { nil: undefined }),
        (record, now, apiId) => {
          const {
            start: _start,
            createdAt: _createdAt,
            updatedAt: _updatedAt,
            rerolledFrom: _from,
            replacedBy: _replacedBy,
            leaked: _leaked,
            usageThresholds: _thresholds,
            ...wanted
          } = record
          const cached = toCachedKey(record)
          expect(cached).toStrictEqual(wanted)
          expect(verify(cached, EMPTY_CONTEXT, { apiId }, now)).toStrictEqual(
            verify(record, EMPTY_CONTEXT, { apiId }, now),
          )
        },
      ),
      { seed: 20261122, numRuns: 500 },
    )
  })
})
