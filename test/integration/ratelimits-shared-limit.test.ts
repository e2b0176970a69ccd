import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { monotonicClock } from '../../shared/clock.js'
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
 * share a wall clock that stands still instead, so every call of a test lands in one window; the revocation bound
 * keeps real time, so that a verifier's cache still goes stale.
 */
const clock = new ManualClock()
const serverOptions = () => ({ redisUrl: redis.url, clock, elapsed: monotonicClock })

describe('ratelimits.limit across two verifiers on Redis', () => {
  let controlPlane: TestServer
  let verifiers: TestServer[]
  beforeAll(async () => {
    controlPlane = await startTestControlPlane(serverOptions())
    verifiers = [await startTestVerifier(serverOptions()), await startTestVerifier(serverOptions())]
  })
  afterAll(async () => {
    await Promise.all(verifiers.map((verifier) => verifier.close()))
    await controlPlane.close()
  })

  const limit = async (server: TestServer, payload: object) =>
    (await server.app.inject({ method: 'POST', url: '/v1/ratelimits.limit', headers: JSON_ONLY, payload })).json()
  /** Sets the namespace's override for 'vip' to 1,000 a minute, on the control plane. */
  const raiseVipLimit = async (namespace: string) => {
    const set = await controlPlane.app.inject({
      method: 'POST',
      url: '/v1/ratelimits.setOverride',
      headers: ADMIN_HEADERS,
      payload: { namespaceName: namespace, identifier: 'vip', limit: 1_000, duration: 60_000 },
    })
    expect(set.statusCode).toBe(200)
  }

  it('lets exactly `limit` concurrent calls through, however they are spread over the verifiers (async:false)', async () => {
    const call = { namespace: `ns-${randomUUID()}`, identifier: 'shared', limit: 25, duration: 600_000 }
    const answers = await Promise.all(Array.from({ length: 80 }, (_, i) => limit(verifiers[i % 2]!, call)))
    // Tallied, so that a failure says which way it went (an error answer, say a 503, is neither).
    const tally = { through: 0, refused: 0, other: [] as string[] }
    for (const answer of answers) {
      if (answer.success === true) tally.through++
      else if (answer.success === false && answer.remaining === 0) tally.refused++
      else tally.other.push(JSON.stringify(answer))
    }
    expect(tally).toEqual({ through: 25, refused: 55, other: [] })
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
    await raiseVipLimit(namespace)
    const since = Date.now()
    for (const verifier of verifiers)
      await waitFor(async () => (await limit(verifier, call)).limit === 1_000, 'the override on every verifier')
    expect(Date.now() - since).toBeLessThan(5_000)
  })

  it('the change feed alone carries an override to a verifier that neither polls nor goes stale', async () => {
    // Polls and the bound an hour apart: the override can come by the feed only, not by a poll or by reading the
    // store once the cache went stale.
    const sync = { pollIntervalMs: 3_600_000, maxStalenessMs: 3_600_000 }
    const listener = await startTestVerifier({ ...serverOptions(), sync })
    try {
      const namespace = `ns-${randomUUID()}`
      const call = { namespace, identifier: 'vip', limit: 10, duration: 60_000, cost: 0 }
      expect((await limit(listener, call)).limit).toBe(10)
      await raiseVipLimit(namespace)
      await waitFor(async () => (await limit(listener, call)).limit === 1_000, 'the override by the feed')
    } finally {
      await listener.close()
    }
  })
})
