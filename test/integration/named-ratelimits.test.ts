import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { ManualClock, startTestControlPlane, startTestVerifier, TEST_ROOT_KEY } from '../support/apps.js'
import { JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { clearOfWindowEdge } from '../support/window-edge.js'

const redis = useRedisServer()

/**
 * Named rate limits on keys and identities, and verifyKey's `ratelimits[]` (Unkey's multi-limit verification): by
 * name, the key's limit before its identity's, auto-applied ones, ad-hoc ones, all or nothing. Each case has its
 * own identity and keys, and the clock is the test's.
 */
onBothStores('named rate limits', { clock: () => new ManualClock(Date.UTC(2026, 10, 23, 12)) }, (stack) => {
  const clock = stack.clock!
  const { post } = stack
  let apiId: string
  beforeAll(async () => {
    apiId = (await post('apis.createApi', { name: 'named limits' })).body.apiId
  })
  const identity = async (ratelimits: object[]) => {
    const externalId = randomUUID()
    const created = await post('identities.createIdentity', { externalId, ratelimits })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return { externalId, identityId: created.body.identityId as string }
  }
  const key = async (fields: object = {}) => {
    const created = await post('keys.createKey', { apiId, ...fields })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return created.body as { key: string; keyId: string }
  }
  const verify = (key: string, ratelimits?: object[]) => stack.verify(ratelimits ? { key, ratelimits } : { key })
  const codes = async (key: string, ratelimits: object[] | undefined, times: number) => {
    const seen: string[] = []
    for (let i = 0; i < times; i++) seen.push((await verify(key, ratelimits)).code)
    return seen
  }
  /** The limit that refused a call: Unkey's test-only Unkey-Ratelimit-Triggered header, here in the body. */
  const triggered = (answer: { ratelimits?: { name: string; exceeded: boolean }[] }) =>
    answer.ratelimits?.find((limit) => limit.exceeded)?.name

  describe('without identities', () => {
    it('applies limits the request defines, and refuses the call when one has no room', async () => {
      const { key: plain } = await key()
      const limits = (cost: number) => [
        { name: '10/10s', cost: 4, limit: 10, duration: 10_000 },
        { name: '1/1min', cost, limit: 1, duration: 60_000 },
      ]
      expect(await verify(plain, limits(1))).toMatchObject({ valid: true, code: 'VALID' })
      const { key: other } = await key()
      const refused = await verify(other, limits(2))
      expect(refused).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
      expect(triggered(refused)).toBe('1/1min')
      // Unkey's header says it too, on both routes (the verifier's own and Fastify's), and only on a refusal.
      const { key: third } = await key()
      for (const server of [stack.verifier, stack.controlPlane]) {
        const answer = await server.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: JSON_ONLY,
          payload: { key: third, ratelimits: limits(2) },
        })
        expect(answer.headers['unkey-ratelimit-triggered']).toBe('1/1min')
      }
      const unnamed = await stack.verifier.app.inject({
        method: 'POST',
        url: '/v1/keys.verifyKey',
        headers: JSON_ONLY,
        payload: { key: third, ratelimits: [{ name: 'é', limit: 1, duration: 1_000, cost: 2 }] },
      })
      expect(unnamed.json()).toMatchObject({ code: 'RATE_LIMITED' })
      expect(unnamed.headers).not.toHaveProperty('unkey-ratelimit-triggered')
    })

    it('answers 400 for a name the key does not have and the request does not define', async () => {
      const { key: plain, keyId } = await key()
      const answer = await post(
        'keys.verifyKey',
        {
          key: plain,
          ratelimits: [
            { name: 'missing_config', cost: 4 },
            { name: '1/1min', limit: 1, duration: 60_000 },
          ],
        },
        stack.verifier,
        JSON_ONLY,
      )
      expect(answer).toMatchObject({
        status: 400,
        body: {
          error: {
            code: 'BAD_REQUEST',
            message: `ratelimits.0: the key ${keyId} has no identity and no limit named "missing_config"; give limit and duration to define one for this call`,
          },
        },
      })
    })

    it('uses the key’s own named limits by name, and its ratelimit as `default` without being named', async () => {
      clock.ms = Date.UTC(2026, 10, 23, 12, 0, 0)
      const { key: limited } = await key({
        ratelimit: { limit: 1, duration: 20_000 },
        ratelimits: [{ name: 'tokens', limit: 5, duration: 60_000 }],
      })
      const first = await verify(limited)
      expect(first).toMatchObject({ valid: true, ratelimit: { limit: 1, remaining: 0 } })
      expect(first.ratelimits).toEqual([
        {
          name: 'default',
          limit: 1,
          duration: 20_000,
          remaining: 0,
          reset: Date.UTC(2026, 10, 23, 12, 0, 20),
          exceeded: false,
        },
      ])
      const second = await verify(limited)
      expect(second).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
      expect(triggered(second)).toBe('default')
      clock.advance(20_000)
      // Named with a cost: the stored limit, at that cost; `default` still applies on its own.
      expect(await verify(limited, [{ name: 'tokens', cost: 5 }])).toMatchObject({ valid: true })
      clock.advance(20_000)
      const spent = await verify(limited, [{ name: 'tokens' }])
      expect(spent).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
      expect(triggered(spent)).toBe('tokens')
    })

    it('counts exactly `limit` calls in every window (Unkey’s accuracy test, with the clock advanced)', async () => {
      clock.ms = Date.UTC(2026, 10, 23, 13, 0, 0)
      const name = randomUUID()
      const { key: limited } = await key({ ratelimits: [{ name, limit: 5, duration: 10_000 }] })
      for (let window = 0; window < 4; window++) {
        const passed = (await codes(limited, [{ name }], 12)).filter((code) => code === 'VALID').length
        expect(passed, `window ${window}`).toBe(5)
        clock.advance(10_000)
      }
    })
  })

  describe('with an identity', () => {
    it('shares the identity’s limit between all its keys: one counter per identity and name', async () => {
      const { externalId } = await identity([{ name: '10per5m', limit: 10, duration: 300_000 }])
      const keys = await Promise.all(Array.from({ length: 4 }, () => key({ externalId })))
      let passed = 0
      for (let i = 0; i < 30; i++) {
        const answer = await verify(keys[i % keys.length]!.key, [{ name: '10per5m' }])
        if (answer.valid) passed++
      }
      expect(passed).toBe(10)
      // A key of the identity that never called is refused too.
      const { key: late } = await key({ externalId })
      expect((await verify(late, [{ name: '10per5m' }])).code).toBe('RATE_LIMITED')
      // Another identity's keys have their own counter.
      const { externalId: other } = await identity([{ name: '10per5m', limit: 10, duration: 300_000 }])
      expect((await verify((await key({ externalId: other })).key, [{ name: '10per5m' }])).valid).toBe(true)
    })

    it('takes the key’s limit over the identity’s of the same name, and still applies the identity’s others', async () => {
      const ids = [
        { name: 'limit1', limit: 1, duration: 600_000 },
        { name: 'limit2', limit: 10, duration: 600_000 },
      ]
      const both = [{ name: 'limit1' }, { name: 'limit2' }]
      // The key's limit1 (4) lets more through than the identity's (1).
      const pass = await key({
        externalId: (await identity(ids)).externalId,
        ratelimits: [{ name: 'limit1', limit: 4, duration: 10_000 }],
      })
      expect(await codes(pass.key, both, 3)).toEqual(['VALID', 'VALID', 'VALID'])
      // The key's limit1 (1) refuses before the identity's (10) would.
      const reject = await key({
        externalId: (await identity([{ name: 'limit1', limit: 10, duration: 600_000 }, ids[1]!])).externalId,
        ratelimits: [{ name: 'limit1', limit: 1, duration: 10_000 }],
      })
      expect(await codes(reject.key, both, 3)).toEqual(['VALID', 'RATE_LIMITED', 'RATE_LIMITED'])
      expect(triggered(await verify(reject.key, both))).toBe('limit1')
      // The identity's limit2 (2) still refuses when the key's limit1 has room.
      const fallback = await key({
        externalId: (await identity([{ name: 'limit2', limit: 2, duration: 600_000 }])).externalId,
        ratelimits: [{ name: 'limit1', limit: 4, duration: 10_000 }],
      })
      expect(await codes(fallback.key, both, 3)).toEqual(['VALID', 'VALID', 'RATE_LIMITED'])
      expect(triggered(await verify(fallback.key, both))).toBe('limit2')
    })

    it('uses the identity’s limits with the request’s costs, and applies autoApply ones unnamed', async () => {
      const { externalId } = await identity([
        { name: 'tokens', limit: 10, duration: 10_000 },
        { name: '10_per_10m', limit: 10, duration: 600_000 },
        { name: 'always', limit: 3, duration: 600_000, autoApply: true },
      ])
      const { key: member } = await key({ externalId })
      const asked = (cost: number) => [{ name: 'tokens', cost }, { name: '10_per_10m' }]
      expect((await verify(member, asked(4))).code).toBe('VALID')
      expect((await verify(member, asked(6))).code).toBe('VALID')
      const refused = await verify(member, asked(1))
      expect(refused.code).toBe('RATE_LIMITED')
      expect(triggered(refused)).toBe('tokens')
      // `always` counted the two calls that passed (a refused call is charged to no limit): one left.
      expect(await verify(member)).toMatchObject({
        valid: true,
        ratelimits: [{ name: 'always', remaining: 0, exceeded: false }],
      })
      expect(triggered(await verify(member))).toBe('always')
    })

    it('charges a refused call to none of its limits', async () => {
      const { externalId } = await identity([{ name: 'tight', limit: 1, duration: 600_000 }])
      const { key: member } = await key({ externalId, ratelimits: [{ name: 'roomy', limit: 5, duration: 600_000 }] })
      const both = [{ name: 'tight' }, { name: 'roomy' }]
      expect((await verify(member, both)).valid).toBe(true)
      for (let i = 0; i < 3; i++) expect((await verify(member, both)).code).toBe('RATE_LIMITED')
      // roomy counted only the call that passed.
      expect(await verify(member, [{ name: 'roomy' }])).toMatchObject({
        valid: true,
        ratelimits: [{ name: 'roomy', remaining: 3 }],
      })
    })

    it('counts limits the request defines per identity, as Unkey does, and the key’s own per key', async () => {
      const { externalId } = await identity([])
      const [a, b] = [await key({ externalId }), await key({ externalId })]
      const adHoc = [{ name: 'burst', limit: 2, duration: 60_000, async: false }]
      expect((await verify(a.key, adHoc)).valid).toBe(true)
      expect((await verify(b.key, adHoc)).valid).toBe(true)
      expect((await verify(a.key, adHoc)).code).toBe('RATE_LIMITED')
      const own = { ratelimits: [{ name: 'mine', limit: 1, duration: 60_000 }], externalId }
      const [c, d] = [await key(own), await key(own)]
      expect((await verify(c.key, [{ name: 'mine' }])).valid).toBe(true)
      expect((await verify(d.key, [{ name: 'mine' }])).valid).toBe(true)
    })

    it('follows a change or the deletion of the identity’s limits on every verifier', async () => {
      const { externalId, identityId } = await identity([{ name: 'calls', limit: 1, duration: 600_000 }])
      const { key: member, keyId } = await key({ externalId })
      expect(await codes(member, [{ name: 'calls' }], 2)).toEqual(['VALID', 'RATE_LIMITED'])
      await post('identities.updateIdentity', {
        identityId,
        ratelimits: [{ name: 'calls', limit: 3, duration: 600_000 }],
      })
      await waitFor(
        async () => (await verify(member, [{ name: 'calls' }])).valid,
        'the new limit on the verifier',
        2_000,
        2,
      )
      await post('identities.deleteIdentity', { identityId })
      await waitFor(
        async () =>
          (await post('keys.verifyKey', { key: member, ratelimits: [{ name: 'calls' }] }, stack.verifier, JSON_ONLY))
            .status === 400,
        'the deletion on the verifier',
        2_000,
        2,
      )
      expect((await verify(member)).valid).toBe(true)
      expect((await stack.getKey(keyId)).identity).toBeUndefined()
    })
  })

  describe('stored on keys', () => {
    it('createKey and updateKey take named limits: shown by getKey, replaced, removed by null or []', async () => {
      const { keyId } = await key({ ratelimits: [{ name: 'tokens', limit: 5, duration: 60_000, autoApply: true }] })
      expect((await stack.getKey(keyId)).ratelimits).toEqual([
        { name: 'tokens', limit: 5, duration: 60_000, autoApply: true },
      ])
      const replaced = [{ name: 'a', limit: 1, duration: 1_000, async: true }]
      expect((await post('keys.updateKey', { keyId, ratelimits: replaced })).status).toBe(200)
      expect((await stack.getKey(keyId)).ratelimits).toEqual(replaced)
      await post('keys.updateKey', { keyId, ratelimits: null })
      expect(await stack.getKey(keyId)).not.toHaveProperty('ratelimits')
      await post('keys.updateKey', { keyId, ratelimits: replaced })
      await post('keys.updateKey', { keyId, ratelimits: [] })
      expect(await stack.getKey(keyId)).not.toHaveProperty('ratelimits')
    })

    it('refuses two limits of one name (409) and a `default` beside the key’s ratelimit (400)', async () => {
      const twice = [
        { name: 'x', limit: 1, duration: 1_000 },
        { name: 'x', limit: 2, duration: 1_000 },
      ]
      expect(await post('keys.createKey', { apiId, ratelimits: twice })).toMatchObject({
        status: 409,
        body: { error: { code: 'CONFLICT', message: 'Ratelimit with name "x" is already defined in the request' } },
      })
      const named = [{ name: 'default', limit: 1, duration: 1_000 }]
      const ratelimit = { limit: 1, duration: 1_000 }
      expect((await post('keys.createKey', { apiId, ratelimit, ratelimits: named })).status).toBe(400)
      const { keyId } = await key({ ratelimit })
      expect((await post('keys.updateKey', { keyId, ratelimits: named })).status).toBe(400)
      expect((await post('keys.updateKey', { keyId, ratelimit: null, ratelimits: named })).status).toBe(200)
    })
  })
})

describe('an identity’s exact limit across two verifiers on one Redis', () => {
  it('lets exactly `limit` calls through, whichever keys and verifiers they come to', async () => {
    const controlPlane = await startTestControlPlane({ redisUrl: redis.url })
    const verifiers = [
      await startTestVerifier({ redisUrl: redis.url }),
      await startTestVerifier({ redisUrl: redis.url }),
    ]
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    const admin = async (path: string, payload: object) =>
      (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const { apiId } = await admin('apis.createApi', { name: 'shared limit' })
    const externalId = randomUUID()
    await admin('identities.createIdentity', {
      externalId,
      ratelimits: [{ name: 'shared', limit: 25, duration: 3_600_000, autoApply: true }],
    })
    const keys = await Promise.all(Array.from({ length: 6 }, () => admin('keys.createKey', { apiId, externalId })))
    // All 90 calls in one hour's window (windows start on the wall clock's hours).
    await clearOfWindowEdge(3_600_000)
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        verifiers[i % 2]!.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: JSON_ONLY,
          payload: { key: keys[i % keys.length].key },
        }),
      ),
    )
    const valid = answers.filter((answer) => answer.json().valid).length
    expect(valid).toBe(25)
    for (const server of [...verifiers, controlPlane]) await server.close()
  })
})
