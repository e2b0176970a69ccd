import { beforeAll, describe, expect, it } from 'vitest'
import {
  ManualClock,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type TestServer,
} from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { useRedisServer } from '../support/redis-server.js'

const redis = useRedisServer()

onBothStores('rate limits (injected clock)', { clock: () => new ManualClock(Date.UTC(2026, 10, 22, 12)) }, (stack) => {
  const clock = stack.clock!
  let apiId: string
  beforeAll(async () => {
    apiId = (await stack.post('apis.createApi', { name: 'limits' })).body.apiId
  })
  const { post } = stack
  const verify = (payload: object) => stack.verify(payload)

  for (const async of [false, true]) {
    it(`${async ? 'async (local)' : 'exact (async:false)'}: lets \`limit\` calls through per window, then RATE_LIMITED until it resets`, async () => {
      clock.ms = Date.UTC(2026, 10, 22, 12, 0, 0)
      const { body: key } = await post('keys.createKey', { apiId, ratelimit: { limit: 3, duration: 10_000, async } })
      const reset = Date.UTC(2026, 10, 22, 12, 0, 10)
      for (const left of [2, 1, 0]) {
        expect(await verify({ key: key.key })).toMatchObject({
          valid: true,
          ratelimit: { limit: 3, remaining: left, reset },
        })
      }
      clock.advance(9_999)
      expect(await verify({ key: key.key })).toMatchObject({
        valid: false,
        code: 'RATE_LIMITED',
        keyId: key.keyId,
        ratelimit: { limit: 3, remaining: 0, reset },
      })
      clock.advance(1)
      expect(await verify({ key: key.key })).toMatchObject({
        valid: true,
        ratelimit: { remaining: 2, reset: reset + 10_000 },
      })
    })
  }

  it('spends no credits on a rate-limited call', async () => {
    const { body: key } = await post('keys.createKey', {
      apiId,
      remaining: 5,
      ratelimit: { limit: 1, duration: 60_000, async: false },
    })
    expect(await verify({ key: key.key })).toMatchObject({ valid: true, remaining: 4 })
    expect(await verify({ key: key.key })).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    expect(
      (
        await stack.controlPlane.app.inject({
          method: 'GET',
          url: `/v1/keys.getKey?keyId=${key.keyId}`,
          headers: ADMIN_HEADERS,
        })
      ).json(),
    ).toMatchObject({ remaining: 4 })
  })

  it('applies ad-hoc ratelimits from the request, with their cost, and refuses incomplete ones', async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    const search = { name: 'search', limit: 5, duration: 60_000, cost: 2, async: false }
    expect(await verify({ key: key.key, ratelimits: [search] })).toMatchObject({ valid: true })
    expect(await verify({ key: key.key, ratelimits: [search] })).toMatchObject({ valid: true })
    expect(await verify({ key: key.key, ratelimits: [search] })).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    expect(await verify({ key: key.key })).toMatchObject({ valid: true })
    const incomplete = await post(
      'keys.verifyKey',
      { key: key.key, ratelimits: [{ name: 'x', limit: 1 }] },
      stack.verifier,
      { 'content-type': 'application/json' },
    )
    expect(incomplete).toMatchObject({
      status: 400,
      body: {
        error: {
          message: expect.stringMatching(/^ratelimits\.0: the key key_\w+ has no identity and no limit named "x"/),
        },
      },
    })
  })

  it('charges a call refused by one limit to none of them, and keeps limits of other durations apart', async () => {
    const { body: key } = await post('keys.createKey', {
      apiId,
      ratelimit: { limit: 3, duration: 60_000, async: false },
    })
    const tight = { name: 'burst', limit: 1, duration: 60_000, async: false }
    expect(await verify({ key: key.key, ratelimits: [tight] })).toMatchObject({
      valid: true,
      ratelimit: { remaining: 2 },
    })
    for (let i = 0; i < 3; i++)
      expect(await verify({ key: key.key, ratelimits: [tight] })).toMatchObject({
        code: 'RATE_LIMITED',
        ratelimit: { limit: 1 },
      })
    // The refused calls cost the key's own limit nothing.
    expect(await verify({ key: key.key })).toMatchObject({ valid: true, ratelimit: { limit: 3, remaining: 1 } })
    // Same name, another duration: another window (on a key without a limit of its own).
    const { body: free } = await post('keys.createKey', { apiId })
    expect(
      await verify({ key: free.key, ratelimits: [{ name: 'x', limit: 1, duration: 1_000, async: false }] }),
    ).toMatchObject({ valid: true })
    expect(
      await verify({ key: free.key, ratelimits: [{ name: 'x', limit: 1, duration: 2_000, async: false }] }),
    ).toMatchObject({ valid: true })
    expect(
      await verify({ key: free.key, ratelimits: [{ name: 'x', limit: 1, duration: 2_000, async: false }] }),
    ).toMatchObject({ code: 'RATE_LIMITED' })
  })

  it('accepts Unkey’s deprecated ratelimit spellings, and clears a limit with null', async () => {
    const { body: key } = await post('keys.createKey', {
      apiId,
      ratelimit: { type: 'consistent', refillRate: 2, refillInterval: 1_000 },
    })
    const read = async () =>
      (
        await stack.controlPlane.app.inject({
          method: 'GET',
          url: `/v1/keys.getKey?keyId=${key.keyId}`,
          headers: ADMIN_HEADERS,
        })
      ).json()
    expect(await read()).toMatchObject({ ratelimit: { limit: 2, duration: 1_000, async: false } })
    expect((await post('keys.createKey', { apiId, ratelimit: { limit: 2 } })).status).toBe(400)
    expect((await post('keys.createKey', { apiId, ratelimit: { limit: 2, duration: 999 } })).status).toBe(400)
    await post('keys.updateKey', { keyId: key.keyId, ratelimit: null })
    expect(await read()).not.toHaveProperty('ratelimit')
  })

  it('answers forward-auth 429 with Retry-After and RateLimit-* ADMIN_HEADERS', async () => {
    clock.ms = Date.UTC(2026, 10, 22, 13, 0, 0)
    const { body: key } = await post('keys.createKey', { apiId, ratelimit: { limit: 1, duration: 30_000 } })
    expect(
      (
        await stack.verifier.app.inject({
          method: 'GET',
          url: '/v1/authorize',
          headers: { 'x-api-key': key.key, 'x-keygate-api-id': apiId },
        })
      ).statusCode,
    ).toBe(200)
    const limited = await stack.verifier.app.inject({
      method: 'GET',
      url: '/v1/authorize',
      headers: { 'x-api-key': key.key, 'x-keygate-api-id': apiId },
    })
    expect(limited.statusCode).toBe(429)
    expect(limited.headers).toMatchObject({
      'x-keygate-code': 'RATE_LIMITED',
      'ratelimit-limit': '1',
      'ratelimit-remaining': '0',
    })
    // Seconds to the window's end by the verifier's own clock (13:00:00 → 13:00:30), whatever the real time.
    expect(limited.headers).toMatchObject({ 'retry-after': '30', 'ratelimit-reset': '30' })
  })
})

describe('async rate limits are reconciled between verifiers', () => {
  it('a verifier learns the others’ usage at the next reconcile', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 14))
    const sync = { pollIntervalMs: 3_600_000 }
    const controlPlane = await startTestControlPlane({ redisUrl: redis.url, clock })
    const [a, b] = [
      await startTestVerifier({ redisUrl: redis.url, clock, sync }),
      await startTestVerifier({ redisUrl: redis.url, clock, sync }),
    ]
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    const post = async (server: TestServer, path: string, payload: object) =>
      (await server.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'reconcile' })
    const { key } = await post(controlPlane, 'keys.createKey', { apiId, ratelimit: { limit: 4, duration: 60_000 } })
    for (let i = 0; i < 3; i++) expect((await post(a, 'keys.verifyKey', { key })).valid).toBe(true)
    // Before reconciling, b knows nothing of a's three calls …
    expect((await post(b, 'keys.verifyKey', { key })).ratelimit).toMatchObject({ remaining: 3 })
    await a.verifier.reconcileRateLimits()
    await b.verifier.reconcileRateLimits()
    // … after, it does: 3 (a) + 1 (b) of 4 are used.
    expect(await post(b, 'keys.verifyKey', { key })).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    await a.verifier.reconcileRateLimits()
    expect(await post(a, 'keys.verifyKey', { key })).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    for (const server of [a, b, controlPlane]) await server.close()
  })
})
