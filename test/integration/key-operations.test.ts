import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/key-material.js'
import { ManualClock, openBackend, startTestControlPlane, startTestVerifier, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedisServer()
})
afterAll(async () => {
  await redis.stop()
})

for (const store of ['memory', 'redis'] as const) {
  describe(`apis.deleteKeys, keys.whoami, keys.rerollKey on the ${store} store`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12))
    let backend: Backend
    let controlPlane: TestServer
    let verifier: TestServer
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({ backend, clock })
      verifier = await startTestVerifier(store === 'redis' ? { redisUrl: redis.url, clock } : { backend, clock })
    })
    afterAll(async () => {
      await verifier.close()
      await controlPlane.close()
      await backend.close()
    })

    async function post(path: string, payload: object, server: TestServer = controlPlane, auth: Record<string, string> = headers) {
      const response = await server.app.inject({ method: 'POST', url: `/v1/${path}`, headers: auth, payload })
      return { status: response.statusCode, body: response.json() }
    }
    const verify = async (key: string) => (await post('keys.verifyKey', { key }, verifier, { 'content-type': 'application/json' })).body
    const newApi = async () => (await post('apis.createApi', { name: 'ops' })).body.apiId as string

    it('deleteKeys removes every key of an api (more than a page) and keeps the api', async () => {
      const apiId = await newApi()
      const keys: { key: string; keyId: string }[] = []
      for (let i = 0; i < 105; i++) keys.push((await post('keys.createKey', { apiId })).body)
      expect((await verify(keys[104]!.key)).valid).toBe(true)
      expect(await post('apis.deleteKeys', { apiId })).toMatchObject({ status: 200, body: { deletedKeys: 105 } })
      await waitFor(async () => (await verify(keys[104]!.key)).code === 'NOT_FOUND', 'the delete to reach the verifier', 2_000, 2)
      expect((await verify(keys[0]!.key)).code).toBe('NOT_FOUND')
      const api = await controlPlane.app.inject({ method: 'GET', url: `/v1/apis.getApi?apiId=${apiId}`, headers })
      expect(api.statusCode).toBe(200)
      expect((await post('apis.deleteKeys', { apiId })).body).toEqual({ deletedKeys: 0 })
      expect((await post('apis.deleteKeys', { apiId: 'api_missing' })).status).toBe(404)
    })

    it('whoami finds a key by its plaintext, for a root key allowed to read it', async () => {
      const apiId = await newApi()
      const { body: created } = await post('keys.createKey', { apiId, name: 'support', externalId: 'acme', meta: { plan: 'pro' } })
      expect(await post('keys.whoami', { key: created.key })).toMatchObject({
        status: 200, body: { id: created.keyId, name: 'support', meta: { plan: 'pro' }, enabled: true, createdAt: clock.now(), identity: { externalId: 'acme' } },
      })
      expect((await post('keys.whoami', { key: 'sk_unknown_000000000' })).status).toBe(404)
      const { key: other, hash } = generateRootKey()
      await backend.store.createRootKey({ id: newId('root'), hash, permissions: ['api.api_elsewhere.read_key'], createdAt: Date.now() })
      expect((await post('keys.whoami', { key: created.key }, controlPlane, { ...headers, authorization: `Bearer ${other}` })).status).toBe(403)
    })

    it('rerollKey issues a new key with the same settings; the old one expires after the grace period', async () => {
      const apiId = await newApi()
      const { body: old } = await post('keys.createKey', { apiId, prefix: 'sk', name: 'rotating', externalId: 'acme', meta: { a: 1 }, permissions: ['p'], environment: 'live' })
      const { status, body: fresh } = await post('keys.rerollKey', { keyId: old.keyId, expiration: 60_000 })
      expect(status).toBe(200)
      expect(fresh.keyId).not.toBe(old.keyId)
      expect(fresh.key).toMatch(/^sk_/)
      const read = (await controlPlane.app.inject({ method: 'GET', url: `/v1/keys.getKey?keyId=${fresh.keyId}`, headers })).json()
      expect(read).toMatchObject({ apiId, name: 'rotating', ownerId: 'acme', meta: { a: 1 }, permissions: ['p'], environment: 'live', enabled: true })
      expect(read).not.toHaveProperty('expires')
      await waitFor(async () => (await verify(old.key)).expires === clock.now() + 60_000, 'the grace period to reach the verifier', 2_000, 2)
      expect((await verify(old.key)).valid).toBe(true)
      expect((await verify(fresh.key)).valid).toBe(true)
      clock.advance(60_000)
      expect(await verify(old.key)).toMatchObject({ valid: false, code: 'EXPIRED' })
      expect((await verify(fresh.key)).valid).toBe(true)

      // Without a grace period the old key stops at once.
      const { body: next } = await post('keys.rerollKey', { keyId: fresh.keyId })
      await waitFor(async () => (await verify(fresh.key)).code === 'EXPIRED', 'the immediate expiry', 2_000, 2)
      expect((await verify(next.key)).valid).toBe(true)
      expect((await post('keys.rerollKey', { keyId: 'key_missing' })).status).toBe(404)
    })
  })
}
