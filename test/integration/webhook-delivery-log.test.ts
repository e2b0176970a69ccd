import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { WEBHOOK_ATTEMPTS_KEPT, webhookDeliveryId, type WebhookEvent } from '../../shared/webhook.js'
import {
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

/**
 * webhooks.listAttempts and webhooks.replay through the API, on both stores, with the control plane's own worker
 * sending to a receiver on this machine: what each answers, what a replay sends, and what it refuses. Who may call
 * them at all is route-security.test.ts's part.
 */
const redis = useRedisServer()

interface Answer {
  status: number
  body: any
}

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`the delivery log and replay on the ${storeKind} store`, () => {
    // Near the real time: receivers refuse a signature whose timestamp is minutes away from theirs.
    const clock = new ManualClock(Date.now())
    let backend: Backend
    let server: TestServer
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      // The receiver is on loopback.
      server = await startTestControlPlane({ backend, clock, webhookPolicy: { allowPrivateAddresses: true } })
    })
    afterAll(async () => {
      await server?.close()
      await backend?.close()
    })
    beforeEach(async () => {
      receiver = await startWebhookReceiver()
      // Each test's events after the last test's: a replay `since` now finds only its own.
      clock.advance(1_000)
    })
    afterEach(async () => {
      const { webhooks } = backend.store
      await Promise.all((await webhooks.listEndpoints()).map((endpoint) => webhooks.deleteEndpoint(endpoint.id)))
      await receiver.stop()
    })

    async function call(method: 'GET' | 'POST', path: string, payload?: object): Promise<Answer> {
      const response = await server.app.inject({
        method,
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        ...(payload === undefined ? {} : { payload }),
      })
      return { status: response.statusCode, body: response.json() }
    }
    const error = (answer: Answer) => ({ status: answer.status, code: answer.body.error?.code })

    /** An endpoint at the receiver, which verifies each request with its secret. */
    async function endpoint(extra: object = {}): Promise<string> {
      const made = await call('POST', 'webhooks.createEndpoint', { url: receiver.url, ...extra })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      receiver.useSecret(made.body.secret)
      return made.body.endpointId
    }
    let n = 0
    /** An event as the deriver keeps it (for replay), queued to no endpoint. */
    async function keptEvent(type: WebhookEvent['type'], at = clock.now(), data = {}): Promise<WebhookEvent> {
      const id = `msg_${storeKind}${++n}${Date.now()}`
      const event: WebhookEvent = { id, type, at, data: { keyId: `key_${n}`, ...data } }
      await backend.store.webhooks.enqueue(event, [], at)
      return event
    }

    it("answers an endpoint's attempts and dead letters, newest first, as many as asked", async () => {
      const endpointId = await endpoint()
      const event = await keptEvent('key.created')
      const deliveryId = webhookDeliveryId(event.id, endpointId)
      for (const attempt of [1, 2, 3])
        await backend.store.webhooks.recordAttempt(endpointId, {
          deliveryId,
          eventId: event.id,
          eventType: event.type,
          at: clock.now() + attempt,
          attempt,
          status: 500,
          error: 'HTTP 500',
          latencyMs: 12,
          responseSnippet: 'oops',
          outcome: attempt === 3 ? 'dead' : 'retry',
        })
      await backend.store.webhooks.enqueue(event, [endpointId], clock.now() + 1_000)
      await backend.store.webhooks.deadLetter({
        id: deliveryId,
        eventId: event.id,
        endpointId,
        attempts: 3,
        queuedAt: 7,
      })
      const listed = await call('GET', `webhooks.listAttempts?endpointId=${endpointId}&limit=2`)
      expect(listed.status).toBe(200)
      expect(listed.body.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([3, 2])
      expect(listed.body.attempts[0]).toEqual({
        deliveryId,
        eventId: event.id,
        eventType: 'key.created',
        at: clock.now() + 3,
        attempt: 3,
        status: 500,
        error: 'HTTP 500',
        latencyMs: 12,
        responseSnippet: 'oops',
        outcome: 'dead',
      })
      expect(listed.body.dead).toEqual([{ deliveryId, eventId: event.id, attempts: 3, queuedAt: 7 }])
      const unknown = await call('GET', 'webhooks.listAttempts?endpointId=whep_unknown')
      expect(error(unknown)).toEqual({ status: 404, code: 'NOT_FOUND' })
      const tooMany = await call(
        'GET',
        `webhooks.listAttempts?endpointId=${endpointId}&limit=${WEBHOOK_ATTEMPTS_KEPT + 1}`,
      )
      expect(error(tooMany)).toEqual({ status: 400, code: 'BAD_REQUEST' })
    })

    it('sends one event again by id, with its own webhook-id, signed', async () => {
      const endpointId = await endpoint()
      const event = await keptEvent('key.deleted')
      expect(await call('POST', 'webhooks.replay', { endpointId, eventId: event.id })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      const arrived = await waitFor(() => receiver.events.find((e) => e.id === event.id), 'the replayed event')
      expect(arrived).toMatchObject({ type: 'key.deleted', data: event.data, verified: true })
      const missing = await call('POST', 'webhooks.replay', { endpointId, eventId: 'msg_none' })
      expect(error(missing)).toEqual({ status: 404, code: 'NOT_FOUND' })
    })

    it('sends again every kept event the endpoint subscribes to from a time on, and only those', async () => {
      const endpointId = await endpoint({ eventTypes: ['key.created'] })
      const before = await keptEvent('key.created', clock.now() - 10)
      const [created, deleted] = [await keptEvent('key.created'), await keptEvent('key.deleted')]
      const replayed = await call('POST', 'webhooks.replay', { endpointId, since: clock.now() })
      expect(replayed).toEqual({ status: 200, body: { queued: 1 } })
      await waitFor(() => receiver.events.some((e) => e.id === created.id), 'the replayed event')
      expect(receiver.requests.map((r) => r.id)).not.toContain(deleted.id)
      expect(receiver.requests.map((r) => r.id)).not.toContain(before.id)
      const future = await call('POST', 'webhooks.replay', { endpointId, since: clock.now() + 1 })
      expect(error(future)).toEqual({ status: 400, code: 'BAD_REQUEST' })
      const both = await call('POST', 'webhooks.replay', { endpointId, since: 0, eventId: created.id })
      expect(error(both)).toEqual({ status: 400, code: 'BAD_REQUEST' })
    })

    it('never sends an endpoint what happened before it was created, however far back a replay reaches', async () => {
      const older = await keptEvent('key.created', clock.now() - 5_000)
      const justBefore = await keptEvent('key.deleted')
      clock.advance(1)
      const endpointId = await endpoint()
      const after = await keptEvent('key.updated')
      expect(await call('POST', 'webhooks.replay', { endpointId, since: 0 })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      await waitFor(() => receiver.events.find((e) => e.id === after.id), 'the event after its creation')
      for (const event of [older, justBefore]) {
        const refused = await call('POST', 'webhooks.replay', { endpointId, eventId: event.id })
        expect(error(refused)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(refused.body.error.message).toBe(
          `eventId: happened before webhook endpoint ${endpointId} was created: it is never sent to it`,
        )
      }
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
      expect(receiver.requests.map((r) => r.id)).toEqual([after.id])
    })

    it('replays to an endpoint scoped to apis only the events about them', async () => {
      const apiId = (await call('POST', 'apis.createApi', { name: 'scoped replay' })).body.apiId as string
      const endpointId = await endpoint({ apiIds: [apiId] })
      const mine = await keptEvent('key.created', clock.now(), { apiId })
      const theirs = await keptEvent('key.created', clock.now(), { apiId: 'api_another' })
      const aboutNoApi = await keptEvent('identity.created', clock.now(), { identityId: 'id_1' })
      expect(await call('POST', 'webhooks.replay', { endpointId, since: 0 })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      await waitFor(() => receiver.events.find((e) => e.id === mine.id), "the scoped api's event")
      for (const event of [theirs, aboutNoApi])
        expect(error(await call('POST', 'webhooks.replay', { endpointId, eventId: event.id }))).toEqual({
          status: 400,
          code: 'BAD_REQUEST',
        })
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
      expect(receiver.requests.map((r) => r.id)).toEqual([mine.id])
    })

    // It would answer `queued` for what the worker then drops unsent.
    it('refuses to replay what the endpoint would not be sent: a type it does not subscribe to, or any when disabled', async () => {
      const endpointId = await endpoint({ eventTypes: ['key.created'] })
      const deleted = await keptEvent('key.deleted')
      const unwanted = await call('POST', 'webhooks.replay', { endpointId, eventId: deleted.id })
      expect(error(unwanted)).toEqual({ status: 400, code: 'BAD_REQUEST' })
      expect(unwanted.body.error.message).toMatch(/key\.deleted/)
      await call('POST', 'webhooks.updateEndpoint', { endpointId, enabled: false })
      const disabled = await call('POST', 'webhooks.replay', { endpointId, since: 0 })
      expect(error(disabled)).toEqual({ status: 412, code: 'PRECONDITION_FAILED' })
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
    })
  })
}
