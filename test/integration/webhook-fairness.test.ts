import { afterEach, describe, expect, it } from 'vitest'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { startSilentEndpoint } from '../support/silent-endpoint.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

/**
 * Endpoints that never answer beside one that does, on a control plane with its deriver and worker running, on both
 * stores: the healthy endpoint's events come as fast as ever, whatever the silent ones hold, at a short timeout and at
 * the default one.
 */
const redis = useRedisServer()

const SILENT = 6
const KEYS = 20

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`webhook delivery beside silent endpoints, on the ${storeKind} store`, () => {
    let backend: Backend | undefined
    let server: TestServer | undefined
    const stops: (() => Promise<void>)[] = []

    afterEach(async () => {
      // The silent endpoints first: their connections reset, the worker's requests end and the control plane closes.
      for (const stop of stops.splice(0)) await stop()
      await server?.close()
      await backend?.close()
    })

    for (const timeoutMs of [3_000, 10_000]) {
      it(`delivers ${KEYS} key.created to a healthy endpoint within 10 s, p50 ≤ 3 s, beside ${SILENT} silent ones (timeout ${timeoutMs} ms)`, async () => {
        backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
        server = await startTestControlPlane({ backend, webhookPolicy: { allowPrivateAddresses: true, timeoutMs } })
        const post = async (path: string, payload: object) => {
          const answer = await server!.app.inject({
            method: 'POST',
            url: `/v1/${path}`,
            headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
            payload,
          })
          expect(answer.statusCode, answer.body).toBe(200)
          return answer.json<Record<string, string>>()
        }
        const receiver = await startWebhookReceiver()
        stops.push(() => receiver.stop())
        for (let n = 0; n < SILENT; n++) {
          const silent = await startSilentEndpoint()
          stops.unshift(() => silent.stop())
          await post('webhooks.createEndpoint', { url: silent.url, eventTypes: ['key.created'] })
        }
        receiver.useSecret((await post('webhooks.createEndpoint', { url: receiver.url })).secret!)
        const { apiId } = await post('apis.createApi', { name: 'fairness' })

        const createdAt = new Map<string, number>()
        for (let n = 0; n < KEYS; n++) {
          const started = Date.now()
          const { keyId } = await post('keys.createKey', { apiId, name: `key ${n}` })
          createdAt.set(keyId!, started)
        }
        const arrived = () => receiver.events.filter((event) => event.type === 'key.created')
        await waitFor(() => arrived().length >= KEYS, `${KEYS} key.created at the healthy endpoint`, 12_000, 20).catch(
          () => undefined,
        )
        const delays = arrived()
          .map((event) => event.at - createdAt.get(String(event.data.keyId))!)
          .sort((a, b) => a - b)
        expect(arrived().every((event) => event.verified)).toBe(true)
        expect(delays, 'every event, each within 10 s').toHaveLength(KEYS)
        expect(delays.at(-1)).toBeLessThanOrEqual(10_000)
        expect(delays[KEYS / 2 - 1], `p50 of ${JSON.stringify(delays)}`).toBeLessThanOrEqual(3_000)
      })
    }
  })
}
