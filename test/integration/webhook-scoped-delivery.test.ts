import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

/**
 * What an endpoint scoped to apis is sent, on both stores, by the control plane's own deriver and worker to receivers
 * on this machine: the key events of its apis, and nothing else — no other api's keys, no identity, no root key. An
 * unscoped endpoint beside it receives everything, which tells when every event has been derived.
 */
const redis = useRedisServer()

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`an endpoint scoped to apis, on the ${storeKind} store`, () => {
    let backend: Backend
    let server: TestServer
    let scopedReceiver: Awaited<ReturnType<typeof startWebhookReceiver>>
    let everyReceiver: Awaited<ReturnType<typeof startWebhookReceiver>>

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      // The receivers are on loopback.
      server = await startTestControlPlane({ backend, webhookPolicy: { allowPrivateAddresses: true } })
      ;[scopedReceiver, everyReceiver] = [await startWebhookReceiver(), await startWebhookReceiver()]
    })
    afterAll(async () => {
      await server?.close()
      await backend?.close()
      await scopedReceiver?.stop()
      await everyReceiver?.stop()
    })

    async function call(path: string, payload: object): Promise<Record<string, any>> {
      const response = await server.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200)
      return response.json()
    }

    it("receives its apis' key events only, signed; an unscoped endpoint receives them all", async () => {
      const { apiId: mine } = await call('apis.createApi', { name: 'mine' })
      const { apiId: theirs } = await call('apis.createApi', { name: 'theirs' })
      const scoped = await call('webhooks.createEndpoint', { url: scopedReceiver.url, apiIds: [mine] })
      scopedReceiver.useSecret(scoped.secret)
      const every = await call('webhooks.createEndpoint', { url: everyReceiver.url })
      everyReceiver.useSecret(every.secret)

      const { keyId: myKey } = await call('keys.createKey', { apiId: mine, name: 'mine', meta: { plan: 'pro' } })
      const { keyId: theirKey } = await call('keys.createKey', { apiId: theirs, name: 'theirs', meta: { plan: 'x' } })
      await call('keys.updateKey', { keyId: myKey, enabled: false })
      await call('keys.updateKey', { keyId: theirKey, enabled: false })
      await call('identities.createIdentity', { externalId: `customer-${storeKind}` })
      await call('rootKeys.createRootKey', { name: 'ci', permissions: [`api.${theirs}.read_key`] })
      await call('keys.deleteKey', { keyId: theirKey })
      await call('keys.deleteKey', { keyId: myKey })

      const expected = ['key.created', 'key.updated', 'key.deleted']
      const arrived = (match: (event: { type: string; data: Record<string, any> }) => boolean) =>
        everyReceiver.events.filter(match).length
      await waitFor(
        () =>
          arrived((event) => event.data.keyId === myKey) >= 3 &&
          arrived((event) => event.data.keyId === theirKey) >= 3 &&
          arrived((event) => event.type === 'identity.created') >= 1 &&
          arrived((event) => event.type === 'rootKey.created') >= 1,
        'every event at the unscoped endpoint',
      )
      // Both endpoints' deliveries are queued together: once none is left, the scoped endpoint has had all of its own.
      await waitFor(async () => (await backend.store.webhooks.queueDepth()) === 0, 'an empty delivery queue')
      // Ordering between events is not promised.
      const received = scopedReceiver.events.map((event) => [event.type, event.data.keyId, event.data.apiId])
      expect(received.sort()).toEqual(expected.map((type) => [type, myKey, mine]).sort())
      expect(scopedReceiver.events.every((event) => event.verified)).toBe(true)
      expect(JSON.stringify(scopedReceiver.requests)).not.toContain(theirKey)
    })
  })
}
