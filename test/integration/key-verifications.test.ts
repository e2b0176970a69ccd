import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import {
  ingestAnalytics,
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useAnalyticsEngine } from '../support/analytics-engine.js'
import { useRedisServer } from '../support/redis-server.js'

const redis = useRedisServer()
const analytics = useAnalyticsEngine()

for (const store of ['memory', 'redis'] as const) {
  describe(`keys.getVerifications on the ${store} store`, () => {
    const clock = new ManualClock(Date.UTC(2031, 4, 10, 10, 30))
    let backend: Backend
    let controlPlane: TestServer
    let verifiers: TestServer[]
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({
        backend,
        clock,
        analytics: analytics.analytics(`control-plane-${store}`),
      })
      const options = store === 'redis' ? { redisUrl: redis.url, clock } : { backend, clock }
      verifiers = [await startTestVerifier(options), await startTestVerifier(options)]
    })
    afterAll(async () => {
      for (const server of [...verifiers, controlPlane]) await server.close()
      await backend.close()
    })

    const post = async (server: TestServer, path: string, payload: object) =>
      (await server.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const get = async (query: string, auth = headers) => {
      const response = await controlPlane.app.inject({
        method: 'GET',
        url: `/v1/keys.getVerifications?${query}`,
        headers: auth,
      })
      return { status: response.statusCode, body: response.json() }
    }

    it('counts successes, rate-limited and usage-exceeded calls of every verifier, by hour and by day', async () => {
      const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'analytics' })
      const { key, keyId } = await post(controlPlane, 'keys.createKey', {
        apiId,
        remaining: 3,
        ratelimit: { limit: 4, duration: 3_600_000, async: false },
      })
      for (let i = 0; i < 3; i++) await post(verifiers[i % 2]!, 'keys.verifyKey', { key }) // 3 successes
      await post(verifiers[0]!, 'keys.verifyKey', { key }) // usage exceeded
      await post(verifiers[1]!, 'keys.verifyKey', { key }) // rate limited (5th of 4)
      clock.advance(3_600_000) // next hour
      await post(controlPlane, 'keys.updateRemaining', { keyId, op: 'set', value: 10 })
      await post(verifiers[0]!, 'keys.verifyKey', { key })
      await ingestAnalytics(controlPlane, ...verifiers)

      const hourly = await get(`keyId=${keyId}&granularity=hour`)
      expect(hourly.body.verifications).toEqual([
        { time: Date.UTC(2031, 4, 10, 10), success: 3, rateLimited: 1, usageExceeded: 1 },
        { time: Date.UTC(2031, 4, 10, 11), success: 1, rateLimited: 0, usageExceeded: 0 },
      ])
      const daily = await get(`keyId=${keyId}`)
      expect(daily.body.verifications).toEqual([
        { time: Date.UTC(2031, 4, 10), success: 4, rateLimited: 1, usageExceeded: 1 },
      ])
      const window = await get(
        `keyId=${keyId}&granularity=hour&start=${Date.UTC(2031, 4, 10, 11)}&end=${Date.UTC(2031, 4, 10, 12)}`,
      )
      expect(window.body.verifications).toHaveLength(1)
    })

    it('needs read_analytics or (as Unkey) read_key on the key’s api, and bounds the range', async () => {
      const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'analytics-2' })
      const { keyId } = await post(controlPlane, 'keys.createKey', { apiId })
      const rootKey = async (permission: string) => {
        const { key, hash } = generateRootKey()
        const rootKeyRecord = { id: newId('root'), hash, permissions: [permission], createdAt: Date.now() }
        await backend.store.rootKeys.createRootKey(rootKeyRecord)
        return { ...headers, authorization: `Bearer ${key}` }
      }
      expect((await get(`keyId=${keyId}`, await rootKey(`api.${apiId}.update_key`))).status).toBe(403)
      expect((await get(`keyId=${keyId}`, await rootKey(`api.${apiId}.read_key`))).status).toBe(200)
      expect((await get(`keyId=${keyId}`, await rootKey(`api.${apiId}.read_analytics`))).status).toBe(200)
      expect((await get(`keyId=key_missing`)).status).toBe(404)
      expect((await get(`keyId=${keyId}&granularity=hour&start=0&end=${clock.now()}`)).status).toBe(400)
      expect((await get(`keyId=${keyId}&start=${clock.now()}&end=${clock.now() - 1}`)).status).toBe(400)
      expect((await get(`keyId=${keyId}&granularity=week`)).status).toBe(400)
      // Far-off times neither hang nor grow without bound.
      expect((await get(`keyId=${keyId}&granularity=hour&start=1e23&end=1e23`)).status).toBe(400)
      const farthest = 9_999_999_999_999
      const started = Date.now()
      expect((await get(`keyId=${keyId}&granularity=hour&start=${farthest}&end=${farthest}`)).body).toEqual({
        verifications: [],
      })
      expect(Date.now() - started).toBeLessThan(1_000)
      expect((await get(`keyId=${keyId}`)).body).toEqual({ verifications: [] })
    })

    it('sums the keys of an owner (ownerId, with the api Keygate finds owners in), as Unkey does by ownerId', async () => {
      const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'analytics-owner' })
      const ownerId = `owner_${newId('key')}`
      const mine = [
        await post(controlPlane, 'keys.createKey', { apiId, ownerId }),
        await post(controlPlane, 'keys.createKey', { apiId, externalId: ownerId }),
      ]
      const other = await post(controlPlane, 'keys.createKey', { apiId })
      expect((await get(`ownerId=${ownerId}&apiId=${apiId}`)).body).toEqual({ verifications: [] })
      for (const { key } of [...mine, mine[0]!, other]) await post(verifiers[0]!, 'keys.verifyKey', { key })
      await ingestAnalytics(controlPlane, ...verifiers)
      const { status, body } = await get(`ownerId=${ownerId}&apiId=${apiId}&granularity=hour`)
      expect(status).toBe(200)
      expect(body.verifications).toEqual([
        { time: Math.floor(clock.now() / 3_600_000) * 3_600_000, success: 3, rateLimited: 0, usageExceeded: 0 },
      ])
    })

    it('counts each key’s answers once, in their hour, memoised or not: across flushes, hours, the clock going back and a change', async () => {
      const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'analytics-memo' })
      const [a, b] = [
        await post(controlPlane, 'keys.createKey', { apiId }),
        await post(controlPlane, 'keys.createKey', { apiId }),
      ]
      const server = verifiers[0]!
      const verify = async (key: string, times: number, extra: object = {}) => {
        for (let i = 0; i < times; i++) await post(server, 'keys.verifyKey', { key, ...extra })
      }
      const first = Math.floor(clock.now() / 3_600_000) * 3_600_000
      // Plain requests: the first decided, the others the memoised verdict; the two keys interleaved.
      await verify(a.key, 3)
      await verify(b.key, 2)
      await verify(a.key, 1)
      // Not plain (a limit named): decided, the second rate-limited; then the memo again.
      const burst = { ratelimits: [{ name: 'burst', limit: 1, duration: 3_600_000 }] }
      await verify(a.key, 2, burst)
      await verify(a.key, 1)
      await ingestAnalytics(controlPlane, ...verifiers)
      await verify(a.key, 2)
      await verify(b.key, 1)
      clock.advance(3_600_000)
      await verify(a.key, 2)
      await verify(b.key, 1)
      clock.advance(-3_600_000) // the clock goes back over the hour
      await verify(a.key, 1)
      await verify(b.key, 1)
      clock.advance(3_600_000)
      // A change: a new record, a new memo.
      await post(controlPlane, 'keys.updateKey', { keyId: a.keyId, name: 'renamed' })
      await server.verifier.pollNow()
      expect(await post(server, 'keys.verifyKey', { key: a.key })).toMatchObject({ code: 'VALID', name: 'renamed' })
      await verify(a.key, 1)
      await ingestAnalytics(controlPlane, ...verifiers)
      const hourly = async (keyId: string) => (await get(`keyId=${keyId}&granularity=hour`)).body.verifications
      expect(await hourly(a.keyId)).toEqual([
        { time: first, success: 9, rateLimited: 1, usageExceeded: 0 },
        { time: first + 3_600_000, success: 4, rateLimited: 0, usageExceeded: 0 },
      ])
      expect(await hourly(b.keyId)).toEqual([
        { time: first, success: 4, rateLimited: 0, usageExceeded: 0 },
        { time: first + 3_600_000, success: 1, rateLimited: 0, usageExceeded: 0 },
      ])
    })

    it('keyId or ownerId: neither is a 400, ownerId without apiId a 400, an unknown api a 404', async () => {
      const { apiId } = await post(controlPlane, 'apis.createApi', { name: 'analytics-owner-errors' })
      const neither = await get('')
      expect({ status: neither.status, message: neither.body.error.message }).toEqual({
        status: 400,
        message: 'keyId or ownerId must be provided',
      })
      expect((await get('ownerId=nobody')).body.error.message).toContain('apiId')
      // An owner without keys (now) may have verifications of keys since deleted: none here.
      expect((await get(`ownerId=nobody&apiId=${apiId}`)).body).toEqual({ verifications: [] })
      expect((await get(`ownerId=nobody&apiId=api_missing`)).status).toBe(404)
    })
  })
}
