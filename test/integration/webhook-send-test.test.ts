import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { WEBHOOK_ATTEMPTS_KEPT, WEBHOOK_EVENT_TYPES, WEBHOOK_TESTS_KEPT } from '../../shared/webhook.js'
import {
  capturedLogger,
  ManualClock,
  openBackend,
  startTestControlPlane,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { TEST_EVENT_PREFIX } from '../../control-plane/webhooks/example-events.js'

/**
 * webhooks.sendTest through the API, on both stores, to receivers on this machine that verify every request with the
 * `standardwebhooks` package (and Svix's): what is sent, what is answered, what the delivery log and the audit log
 * keep, and who may send one. The route's missing, wrong and under-privileged root keys are route-security.test.ts's.
 */
const redis = useRedisServer()

interface Answer {
  status: number
  body: any
}

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`webhooks.sendTest on the ${storeKind} store`, () => {
    // Near the real time: receivers refuse a signature whose timestamp is minutes away from theirs.
    const clock = new ManualClock(Date.now())
    const { log, lines } = capturedLogger()
    let backend: Backend
    /** Allows loopback endpoints: the receivers are on this machine. */
    let server: TestServer
    /** The default policy, on the same store: loopback is refused. */
    let strict: TestServer
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      server = await startTestControlPlane({ backend, clock, log, webhookPolicy: { allowPrivateAddresses: true } })
      strict = await startTestControlPlane({ backend, clock, log })
    })
    afterAll(async () => {
      await strict?.close()
      await server?.close()
      await backend?.close()
    })
    beforeEach(async () => {
      receiver = await startWebhookReceiver()
    })
    afterEach(async () => {
      const { webhooks } = backend.store
      await Promise.all((await webhooks.listEndpoints()).map((endpoint) => webhooks.deleteEndpoint(endpoint.id)))
      await receiver.stop()
    })

    async function post(path: string, payload: object, rootKey = TEST_ROOT_KEY, to = server): Promise<Answer> {
      const response = await to.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${rootKey}` },
        payload,
      })
      return { status: response.statusCode, body: response.json() }
    }
    const error = (answer: Answer) => ({ status: answer.status, code: answer.body.error?.code })

    /** An endpoint at the receiver, which verifies each request with its secret. */
    async function endpoint(extra: object = {}): Promise<string> {
      const made = await post('webhooks.createEndpoint', { url: receiver.url, ...extra })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      receiver.useSecret(made.body.secret)
      return made.body.endpointId
    }
    async function rootKey(permissions: string[]): Promise<string> {
      const made = await post('rootKeys.createRootKey', { permissions })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return made.body.key
    }
    async function attempts(endpointId: string, limit = 20): Promise<any[]> {
      const response = await server.app.inject({
        method: 'GET',
        url: `/v1/webhooks.listAttempts?endpointId=${endpointId}&limit=${limit}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      })
      return response.json().attempts
    }

    it('sends a signed example key.created now, answers what the endpoint did, and logs it as a test', async () => {
      const endpointId = await endpoint()
      const sent = await post('webhooks.sendTest', { endpointId })
      expect(sent.status, JSON.stringify(sent.body)).toBe(200)
      expect(sent.body).toEqual({
        delivered: true,
        eventId: expect.stringMatching(/^msg_test_[A-Za-z0-9_-]{16}$/),
        eventType: 'key.created',
        deliveryId: `${sent.body.eventId}.${endpointId}`,
        at: clock.now(),
        status: 204,
        latencyMs: expect.any(Number),
      })
      // Sent before the call answered: the receiver has it, and its signature holds.
      expect(receiver.events).toEqual([
        {
          id: sent.body.eventId,
          type: 'key.created',
          data: expect.objectContaining({ keyId: 'key_example', apiId: 'api_example', identityId: 'id_example' }),
          at: expect.any(Number),
          verified: true,
        },
      ])
      expect(await attempts(endpointId)).toEqual([
        {
          deliveryId: sent.body.deliveryId,
          eventId: sent.body.eventId,
          eventType: 'key.created',
          at: clock.now(),
          attempt: 1,
          status: 204,
          latencyMs: sent.body.latencyMs,
          outcome: 'delivered',
          test: true,
        },
      ])
      // Neither queued nor kept: nothing to retry, nothing to replay.
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
      expect(await backend.store.webhooks.getEvent(sent.body.eventId)).toBeNull()
      expect(error(await post('webhooks.replay', { endpointId, eventId: sent.body.eventId }))).toEqual({
        status: 404,
        code: 'NOT_FOUND',
      })
      const audit = await server.app.inject({
        method: 'GET',
        url: '/v1/audit.list?action=webhooks.sendTest&limit=1',
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      })
      expect(audit.json().entries).toMatchObject([
        {
          action: 'webhooks.sendTest',
          context: { endpointId, eventId: sent.body.eventId, eventType: 'key.created', outcome: 'delivered' },
        },
      ])
      // Each test has an id of its own: a receiver that drops repeated ids takes the next one.
      const again = await post('webhooks.sendTest', { endpointId })
      expect(again.body.eventId).not.toBe(sent.body.eventId)
    })

    it('sends an example of every event type, each shaped as that type, with example ids only', async () => {
      const endpointId = await endpoint()
      for (const eventType of WEBHOOK_EVENT_TYPES) {
        const sent = await post('webhooks.sendTest', { endpointId, eventType })
        expect(sent.body, eventType).toMatchObject({ delivered: true, eventType, status: 204 })
      }
      expect(receiver.events.map((event) => event.type)).toEqual(WEBHOOK_EVENT_TYPES)
      expect(receiver.events.every((event) => event.verified)).toBe(true)
      const byType = Object.fromEntries(receiver.events.map((event) => [event.type, event.data]))
      expect(byType['key.rerolled']).toEqual({
        keyId: 'key_example',
        apiId: 'api_example',
        newKeyId: 'key_example_new',
      })
      expect(byType['key.updated']).toMatchObject({ keyId: 'key_example', enabled: false, changed: ['enabled'] })
      expect(byType['key.credits.low']).toEqual({
        keyId: 'key_example',
        apiId: 'api_example',
        remaining: 10,
        threshold: 10,
      })
      expect(byType['key.leaked']).toMatchObject({ keyId: 'key_example', leaked: { reporter: 'github' } })
      expect(byType['identity.created']).toMatchObject({ identityId: 'id_example', externalId: 'example-customer' })
      expect(byType['rootKey.rolled']).toEqual({ rootKeyId: 'root_example', newRootKeyId: 'root_example_new' })
      // Every id an example one: nothing of the store is in any of them.
      const ids = JSON.stringify(receiver.events.map((event) => event.data)).match(/"[a-z]+_[A-Za-z0-9_]+"/g) ?? []
      for (const id of new Set(ids)) expect(id, 'an id in the examples').toMatch(/_example/)
    })

    it('sends the type the endpoint takes when it does not take key.created, and to a disabled endpoint', async () => {
      const endpointId = await endpoint({ eventTypes: ['identity.deleted', 'key.deleted'], enabled: false })
      const sent = await post('webhooks.sendTest', { endpointId })
      expect(sent.body).toMatchObject({ delivered: true, eventType: 'identity.deleted' })
      expect(receiver.events.map((event) => [event.type, event.data])).toEqual([
        ['identity.deleted', { identityId: 'id_example', externalId: 'example-customer', meta: { plan: 'example' } }],
      ])
    })

    it('answers an endpoint that fails with what it said (200, delivered false), and logs it failed', async () => {
      const endpointId = await endpoint()
      receiver.setMode('down')
      const sent = await post('webhooks.sendTest', { endpointId, eventType: 'key.deleted' })
      expect(sent.status).toBe(200)
      expect(sent.body).toMatchObject({
        delivered: false,
        status: 503,
        error: 'HTTP 503',
        responseSnippet: 'down for maintenance',
      })
      expect(await attempts(endpointId)).toMatchObject([{ outcome: 'failed', status: 503, test: true }])
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
    })

    it('answers a redirect as not delivered, and does not follow it', async () => {
      const endpointId = await endpoint()
      receiver.setMode('moved')
      const sent = await post('webhooks.sendTest', { endpointId })
      expect(sent.body).toMatchObject({
        delivered: false,
        status: 308,
        error: 'HTTP 308',
        responseSnippet: 'moved for good',
      })
      expect(await attempts(endpointId)).toMatchObject([{ outcome: 'failed', status: 308, test: true }])
      expect(receiver.requests).toHaveLength(1)
    })

    // A root key that may only send tests would otherwise push every real attempt out of the log.
    it(`keeps the last ${WEBHOOK_TESTS_KEPT} tests apart from the delivery log: however many, no real attempt leaves it`, async () => {
      // Of a type no call here makes: only the tests are sent to it.
      const endpointId = await endpoint({ eventTypes: ['key.deleted'] })
      const real = {
        deliveryId: `msg_real.${endpointId}`,
        eventId: 'msg_real',
        eventType: 'key.deleted' as const,
        at: clock.now() - 1,
        attempt: 5,
        status: 500,
        error: 'HTTP 500',
        latencyMs: 3,
        outcome: 'dead' as const,
      }
      await backend.store.webhooks.recordAttempt(endpointId, real)
      const tester = await rootKey([`webhook.${endpointId}.send_test`])
      const sent: string[] = []
      for (let i = 0; i < WEBHOOK_ATTEMPTS_KEPT; i++) {
        const test = await post('webhooks.sendTest', { endpointId }, tester)
        expect(test.status).toBe(200)
        sent.push(test.body.eventId)
      }
      // The tests among the attempts, newest first, counted apart from them.
      const log = await attempts(endpointId, WEBHOOK_ATTEMPTS_KEPT)
      expect(log.map((attempt) => attempt.eventId)).toEqual([
        ...sent.slice(-WEBHOOK_TESTS_KEPT).reverse(),
        real.eventId,
      ])
      expect(log.at(-1)).toEqual(real)
      expect((await attempts(endpointId, 1)).map((attempt) => attempt.eventId)).toEqual([sent.at(-1), real.eventId])
    })

    // A slow receiver is never held by a pile of tests: the worker's lanes bound real deliveries, this bounds tests.
    it('sends one test at a time to an endpoint: another meanwhile is 429, another endpoint is not held', async () => {
      const quick = await startTestControlPlane({
        backend,
        clock,
        webhookPolicy: { allowPrivateAddresses: true, timeoutMs: 1_500 },
      })
      const other = await startWebhookReceiver()
      try {
        const endpointId = await endpoint()
        const made = await post('webhooks.createEndpoint', { url: other.url })
        other.useSecret(made.body.secret)
        receiver.setMode('hang')
        const send = (id: string) =>
          quick.app.inject({
            method: 'POST',
            url: '/v1/webhooks.sendTest',
            headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
            payload: { endpointId: id },
          })
        const first = send(endpointId)
        await waitFor(() => receiver.requests.length === 1, 'the first test at the endpoint')
        const second = await send(endpointId)
        expect(second.statusCode).toBe(429)
        expect(second.headers['retry-after']).toBe('2')
        expect(second.json().error).toMatchObject({
          code: 'RATE_LIMITED',
          message: `a test event is being sent to webhook endpoint ${endpointId} already: one at a time; retry in 2 s`,
        })
        expect((await send(made.body.endpointId)).json()).toMatchObject({ delivered: true })
        expect((await first).json()).toMatchObject({ delivered: false, error: 'timeout' })
        expect(receiver.requests).toHaveLength(1)
        // Once the answer is in, the next one goes.
        receiver.setMode('up')
        expect((await send(endpointId)).json()).toMatchObject({ delivered: true })
      } finally {
        await other.stop()
        await quick.close()
      }
    })

    it('goes through the address policy of real deliveries: a loopback endpoint is refused where it is not allowed', async () => {
      const endpointId = await endpoint()
      const sent = await post('webhooks.sendTest', { endpointId }, TEST_ROOT_KEY, strict)
      expect(sent.status).toBe(200)
      expect(sent.body).toMatchObject({
        delivered: false,
        error: 'refused: 127.0.0.1 is a loopback address, not a public one',
      })
      expect(sent.body).not.toHaveProperty('status')
      expect(receiver.requests).toEqual([])
    })

    it('refuses an unknown event type (400) and an endpoint that does not exist (404)', async () => {
      const endpointId = await endpoint()
      const unknown = await post('webhooks.sendTest', { endpointId, eventType: 'key.exploded' })
      expect(error(unknown)).toEqual({ status: 400, code: 'BAD_REQUEST' })
      expect(unknown.body.error.message).toBe(
        `eventType: must be one of ${WEBHOOK_EVENT_TYPES.map((type) => JSON.stringify(type)).join(', ')}`,
      )
      const absent = await post('webhooks.sendTest', { endpointId: 'whep_absent' })
      expect(error(absent)).toEqual({ status: 404, code: 'NOT_FOUND' })
      expect(receiver.requests).toEqual([])
    })

    it('needs send_test on the endpoint: no other webhook right, no read right; another endpoint is not found', async () => {
      const other = await endpoint({ url: 'http://127.0.0.1:9/another' })
      const mine = await endpoint()
      const otherRights = await rootKey(['webhook.*.update_endpoint', 'webhook.*.replay', 'api.*.*'])
      const refused = await post('webhooks.sendTest', { endpointId: mine }, otherRights)
      expect(error(refused)).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS' })
      expect(refused.body.error.message).toBe('the root key needs webhook.*.send_test')
      // Example data only: no read right is needed, whatever the endpoint is sent.
      const tester = await rootKey([`webhook.${mine}.send_test`])
      expect((await post('webhooks.sendTest', { endpointId: mine }, tester)).body).toMatchObject({ delivered: true })
      expect(error(await post('webhooks.sendTest', { endpointId: other }, tester))).toEqual({
        status: 404,
        code: 'NOT_FOUND',
      })
      // Only the one test event (the root keys' own rootKey.created events may be delivered meanwhile).
      expect(receiver.requests.filter((request) => request.id.startsWith(TEST_EVENT_PREFIX))).toHaveLength(1)
      // The secret signs; it is in no log line.
      expect(lines.join('')).not.toContain('whsec_')
    })
  })
}
