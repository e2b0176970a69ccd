import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const redis = useRedisServer()

for (const store of ['memory', 'redis'] as const) {
  describe(`key expiry on the ${store} store (injected clock, no change event needed)`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12))
    let backend: Backend
    let controlPlane: TestServer
    let verifier: TestServer

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({ backend, clock })
      // The verifier has its own connection and cache, as a sidecar would.
      verifier = await startTestVerifier({
        redisUrl: store === 'redis' ? redis.url : undefined,
        backend: store === 'memory' ? backend : undefined,
        clock,
      })
    })
    afterAll(async () => {
      await verifier.close()
      await controlPlane.close()
      await backend.close()
    })

    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    const post = async (server: TestServer, path: string, payload: object, auth = true) => {
      const response = await server.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: auth ? headers : { 'content-type': 'application/json' },
        payload,
      })
      return { status: response.statusCode, body: response.json() }
    }

    it('verifies until `expires`, answers EXPIRED from that millisecond on, everywhere, and again VALID once cleared', async () => {
      const { body: api } = await post(controlPlane, 'apis.createApi', { name: 'expiry' })
      const expires = clock.now() + 60_000
      const { body: created } = await post(controlPlane, 'keys.createKey', { apiId: api.apiId, expires })
      for (const server of [verifier, controlPlane]) {
        expect((await post(server, 'keys.verifyKey', { key: created.key }, false)).body).toMatchObject({
          valid: true,
          code: 'VALID',
          expires,
        })
      }
      clock.advance(59_999)
      expect((await post(verifier, 'keys.verifyKey', { key: created.key }, false)).body.valid).toBe(true)
      clock.advance(1)
      for (const server of [verifier, controlPlane]) {
        expect((await post(server, 'keys.verifyKey', { key: created.key }, false)).body).toMatchObject({
          valid: false,
          code: 'EXPIRED',
          keyId: created.keyId,
          expires,
          enabled: true,
        })
      }
      const gateway = await verifier.app.inject({
        method: 'GET',
        url: '/v1/authorize',
        headers: { 'x-api-key': created.key, 'x-keygate-api-id': api.apiId },
      })
      expect(gateway.statusCode).toBe(401)
      expect(gateway.headers['x-keygate-code']).toBe('EXPIRED')

      const read = await controlPlane.app.inject({
        method: 'GET',
        url: `/v1/keys.getKey?keyId=${created.keyId}`,
        headers,
      })
      expect(read.json()).toMatchObject({ expires })
      expect((await post(controlPlane, 'keys.updateKey', { keyId: created.keyId, expires: null })).status).toBe(200)
      const again = async () => (await post(verifier, 'keys.verifyKey', { key: created.key }, false)).body
      await waitFor(async () => (await again()).valid === true, 'the key without expiry', 2_000, 5).catch(() => {})
      expect(await again()).toMatchObject({ valid: true })
      expect(
        (
          await controlPlane.app.inject({ method: 'GET', url: `/v1/keys.getKey?keyId=${created.keyId}`, headers })
        ).json(),
      ).not.toHaveProperty('expires')
    })

    it('refuses an expiry that is not in the future on create, and one in seconds on create and on update', async () => {
      const { body: api } = await post(controlPlane, 'apis.createApi', { name: 'expiry-past' })
      const past = await post(controlPlane, 'keys.createKey', { apiId: api.apiId, expires: clock.now() })
      expect(past).toMatchObject({
        status: 400,
        body: { error: { code: 'BAD_REQUEST', message: 'expires: must be in the future (unix milliseconds)' } },
      })
      const seconds = await post(controlPlane, 'keys.createKey', {
        apiId: api.apiId,
        expires: Math.floor(clock.now() / 1000) + 3600,
      })
      expect(seconds.status).toBe(400)
      const { body: created } = await post(controlPlane, 'keys.createKey', { apiId: api.apiId })
      expect(
        (await post(controlPlane, 'keys.updateKey', { keyId: created.keyId, expires: Math.floor(clock.now() / 1000) }))
          .body.error,
      ).toMatchObject({ code: 'BAD_REQUEST', message: 'expires: must be unix milliseconds (this looks like seconds)' })
      expect((await post(controlPlane, 'keys.updateKey', { keyId: created.keyId, expires: 'tomorrow' })).status).toBe(
        400,
      )
    })
  })
}
