import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock, startTestControlPlane, startTestVerifier, type TestServer } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY } from '../support/both-stores.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * The standalone rate-limit service across processes on one real Redis: two verifier sidecars (own connections,
 * own caches) and a control plane share one exact window, and both verifiers follow an override within the bound.
 */
const redis = useRedisServer()
/**
 * Windows are fixed (a multiple of their duration since the epoch): on the wall clock a batch that straddled an edge
 * (every :00, :10, … for ten minutes) would count in two windows and let more than `limit` through. The servers
 * share a clock that stands still instead, so every call of a test lands in one window.
 */
const clock = new ManualClock()

describe('ratelimits.limit across two verifiers on Redis', () => {
  let controlPlane: TestServer
  let verifiers: TestServer[]
  beforeAll(async () => {
    controlPlane = await startTestControlPlane({ redisUrl: redis.url, clock })
    verifiers = [
      await startTestVerifier({ redisUrl: redis.url, clock }),
      await startTestVerifier({ redisUrl: redis.url, clock }),
    ]
  })
  afterAll(async () => {
    await Promise.all(verifiers.map((verifier) => verifier.close()))
    await controlPlane.close()
  })

  const limit = async (server: TestServer, payload: object) =>
    (await server.app.inject({ method: 'POST', url: '/v1/ratelimits.limit', headers: JSON_ONLY, payload })).json()

  it('lets exactly `limit` concurrent calls through, however they are spread over the verifiers (async:false)', async () => {
    const call = { namespace: `ns-${randomUUID()}`, identifier: 'shared', limit: 25, duration: 600_000 }
    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => limit(verifiers[i % 2]!, call)))
    expect(answers.filter((answer) => answer.success)).toHaveLength(25)
    expect(answers.filter((answer) => !answer.success).every((answer) => answer.remaining === 0)).toBe(true)
  })

  it('async: each verifier counts alone until they reconcile, then each knows the other’s usage', async () => {
    const call = { namespace: `ns-${randomUUID()}`, identifier: 'shared', limit: 10, duration: 600_000, async: true }
    for (let i = 0; i < 3; i++) expect((await limit(verifiers[0]!, call)).success).toBe(true)
    // Give the first call's background read of the window time to land, then hand the usage over.
    await verifiers[0]!.ratelimits.reconcile()
    await verifiers[1]!.ratelimits.reconcile()
    await waitFor(async () => (await limit(verifiers[1]!, { ...call, cost: 0 })).remaining === 7, 'the other count')
    expect((await limit(verifiers[1]!, { ...call, cost: 7 })).success).toBe(true)
    await verifiers[1]!.ratelimits.reconcile()
    await verifiers[0]!.ratelimits.reconcile()
    expect(await limit(verifiers[0]!, call)).toMatchObject({ success: false, remaining: 0 })
  })

  it('an override set on the control plane changes both verifiers’ answers within the revocation bound', async () => {
    const namespace = `ns-${randomUUID()}`
    const call = { namespace, identifier: 'vip', limit: 10, duration: 60_000, cost: 0 }
    for (const verifier of verifiers) expect((await limit(verifier, call)).limit).toBe(10)
    const set = await controlPlane.app.inject({
      method: 'POST',
      url: '/v1/ratelimits.setOverride',
      headers: ADMIN_HEADERS,
      payload: { namespaceName: namespace, identifier: 'vip', limit: 1_000, duration: 60_000 },
    })
    expect(set.statusCode).toBe(200)
    const since = Date.now()
    for (const verifier of verifiers)
      await waitFor(async () => (await limit(verifier, call)).limit === 1_000, 'the override on every verifier')
    expect(Date.now() - since).toBeLessThan(5_000)
  })
})
