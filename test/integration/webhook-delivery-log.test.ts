import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { replayAllSince, type ReplayCall } from '../../console/src/pages/replay-all.js'
import { REPLAY_MAX, REPLAY_SCAN } from '../../control-plane/webhooks/replay.js'
import { DERIVER_LEASE } from '../../control-plane/webhooks/events/event-deriver.js'
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
/** Who holds the deriver's lease while a test makes the deriver lag. */
const HOLDER = 'the-test'

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
    /** An event as the deriver keeps it (for replay), queued to no endpoint, made when it happened unless told. */
    async function keptEvent(
      type: WebhookEvent['type'],
      at = clock.now(),
      data = {},
      madeAt?: number,
    ): Promise<WebhookEvent> {
      const id = `msg_${storeKind}${++n}${Date.now()}`
      const event: WebhookEvent = {
        id,
        type,
        at,
        ...(madeAt === undefined ? {} : { madeAt }),
        data: { keyId: `key_${n}`, ...data },
      }
      await backend.store.webhooks.enqueue(event, [], at)
      return event
    }
    /** `count` key.created events of the api, all made at `at` (their order: by id), kept as keptEvent does. */
    async function keptEvents(count: number, apiId: string, at: number): Promise<void> {
      for (let first = 0; first < count; first += 500)
        await Promise.all(
          Array.from({ length: Math.min(500, count - first) }, () => keptEvent('key.created', at, { apiId })),
        )
    }
    /** Takes off the queue whatever is on it, due or not: what a test queued beyond what the worker sends meanwhile. */
    async function emptyQueue(): Promise<void> {
      const { webhooks } = backend.store
      for (;;) {
        const claimed = await webhooks.claimDue(clock.now() + 365 * 86_400_000, 60_000, 1_000)
        if (claimed.length === 0) return
        await Promise.all(claimed.map((delivery) => webhooks.complete(delivery.id)))
      }
    }
    async function newApi(name: string): Promise<string> {
      const made = await call('POST', 'apis.createApi', { name })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return made.body.apiId
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
          `eventId: was made before webhook endpoint ${endpointId} began receiving at its URL ` +
            `(${new Date(clock.now()).toISOString()}): it is never sent to it`,
        )
      }
      expect(await backend.store.webhooks.queueDepth()).toBe(0)
      expect(receiver.requests.map((r) => r.id)).toEqual([after.id])
    })

    // A deriver that lags makes an event long after what it tells of happened: the endpoint was sent it.
    it('replays an event made after the endpoint was created about what happened before, by id and since', async () => {
      const endpointId = await endpoint()
      const late = await keptEvent('key.created', clock.now() - 60_000, {}, clock.now())
      expect(await call('POST', 'webhooks.replay', { endpointId, eventId: late.id })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      const arrived = await waitFor(() => receiver.events.find((e) => e.id === late.id), 'the late event')
      expect(arrived).toMatchObject({ verified: true })
      await waitFor(async () => (await backend.store.webhooks.queueDepth()) === 0, 'an empty queue')
      expect(await call('POST', 'webhooks.replay', { endpointId, since: 0 })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
    })

    // Else a root key pointing an old endpoint at its own receiver would replay it everything kept since its creation.
    it("never replays to an endpoint's new URL what was made before it was pointed there", async () => {
      const endpointId = await endpoint()
      const history = await keptEvent('key.created')
      clock.advance(1_000)
      // A change of description, or of the URL to the one it has, starts nothing anew.
      for (const change of [{ description: 'ops' }, { url: receiver.url }])
        expect(await call('POST', 'webhooks.updateEndpoint', { endpointId, ...change })).toEqual({
          status: 200,
          body: {},
        })
      expect(await call('POST', 'webhooks.replay', { endpointId, eventId: history.id })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      await waitFor(() => receiver.events.find((e) => e.id === history.id), 'the event at the first URL')
      await waitFor(async () => (await backend.store.webhooks.queueDepth()) === 0, 'an empty queue')
      const other = await startWebhookReceiver()
      try {
        clock.advance(1_000)
        expect(await call('POST', 'webhooks.updateEndpoint', { endpointId, url: other.url })).toEqual({
          status: 200,
          body: {},
        })
        const movedAt = clock.now()
        expect(await call('POST', 'webhooks.replay', { endpointId, since: 0 })).toEqual({
          status: 200,
          body: { queued: 0 },
        })
        const refused = await call('POST', 'webhooks.replay', { endpointId, eventId: history.id })
        expect(error(refused)).toEqual({ status: 400, code: 'BAD_REQUEST' })
        expect(refused.body.error.message).toBe(
          `eventId: was made before webhook endpoint ${endpointId} began receiving at its URL ` +
            `(${new Date(movedAt).toISOString()}): it is never sent to it`,
        )
        // What is made from then on is its new receiver's.
        const after = await keptEvent('key.deleted')
        expect(await call('POST', 'webhooks.replay', { endpointId, since: 0 })).toEqual({
          status: 200,
          body: { queued: 1 },
        })
        await waitFor(() => other.requests.find((r) => r.id === after.id), 'the event made after the move')
        expect(other.requests.map((r) => r.id)).toEqual([after.id])
      } finally {
        await other.stop()
      }
    })

    it(`queues ${REPLAY_MAX} events a call at most, and answers a cursor that goes on from the last one`, async () => {
      const apiId = await newApi('many')
      const endpointId = await endpoint({ apiIds: [apiId] })
      const start = clock.now()
      await keptEvents(REPLAY_MAX + 1, apiId, start)
      clock.advance(1_000)
      const first = await call('POST', 'webhooks.replay', { endpointId, since: start })
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      expect(first.body).toEqual({ queued: REPLAY_MAX, cursor: expect.any(String) })
      const rest = { endpointId, cursor: first.body.cursor }
      expect(await call('POST', 'webhooks.replay', rest)).toEqual({ status: 200, body: { queued: 1 } })
      // The console's Send events again follows the cursors to the last event.
      const post: ReplayCall = async (operation, body) => (await call('POST', operation, body)).body
      expect(await replayAllSince(post, endpointId, start)).toBe(REPLAY_MAX + 1)
      // More than the worker sends in a test's time: what it has not sent goes.
      await emptyQueue()
      // Once the endpoint's URL changes, the same cursor replays nothing made before.
      const other = await startWebhookReceiver()
      try {
        await call('POST', 'webhooks.updateEndpoint', { endpointId, url: other.url })
        expect(await call('POST', 'webhooks.replay', rest)).toEqual({ status: 200, body: { queued: 0 } })
        expect(await backend.store.webhooks.queueDepth()).toBe(0)
      } finally {
        await other.stop()
      }
    }, 60_000)

    // A scoped endpoint's events may stand behind many of other apis: each call looks at a bounded number.
    it(`looks past other apis' events for a scoped endpoint, at most ${REPLAY_SCAN} a call, then answers a cursor`, async () => {
      const [mine, busy] = [await newApi('quiet'), await newApi('busy')]
      const endpointId = await endpoint({ apiIds: [mine] })
      const start = clock.now()
      await keptEvents(REPLAY_MAX, busy, start)
      const own = await keptEvent('key.created', start + 1, { apiId: mine })
      clock.advance(1_000)
      // Behind a thousand: found in one call.
      expect(await call('POST', 'webhooks.replay', { endpointId, since: start })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      await waitFor(() => receiver.events.find((e) => e.id === own.id), 'its own event')
      // Behind more than a call looks at: a cursor, and the next call finds it.
      const later = clock.now()
      await keptEvents(REPLAY_SCAN, busy, later)
      const behind = await keptEvent('key.created', later + 1, { apiId: mine })
      clock.advance(1_000)
      const first = await call('POST', 'webhooks.replay', { endpointId, since: later })
      expect(first.body).toEqual({ queued: 0, cursor: expect.any(String) })
      expect(await call('POST', 'webhooks.replay', { endpointId, cursor: first.body.cursor })).toEqual({
        status: 200,
        body: { queued: 1 },
      })
      await waitFor(() => receiver.events.find((e) => e.id === behind.id), 'its event behind the others')
    }, 60_000)

    it('refuses a cursor no replay answered, and more than one of eventId, since and cursor (400)', async () => {
      const endpointId = await endpoint()
      for (const body of [
        { cursor: 'not a cursor' },
        { cursor: '12.msg_x', since: 0 },
        { cursor: '12.msg_x', eventId: 'msg_x' },
        {},
      ]) {
        const refused = await call('POST', 'webhooks.replay', { endpointId, ...body })
        expect(error(refused), JSON.stringify(body)).toEqual({ status: 400, code: 'BAD_REQUEST' })
      }
      const bad = await call('POST', 'webhooks.replay', { endpointId, cursor: 'not a cursor' })
      expect(bad.body.error.message).toBe('cursor: is not a cursor webhooks.replay answered')
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

  // The deriver may read a change long after it was written (a backlog, a lease changing hands): the event it then
  // makes is sent to the endpoints there are by then, and so is theirs to replay.
  describe(`replay after a deriver that lagged, on the ${storeKind} store`, () => {
    const clock = new ManualClock(Date.now())
    let backend: Backend
    let server: TestServer
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      // Held off from the start: another holder has the deriver's lease.
      expect(await backend.store.webhooks.holdLease(DERIVER_LEASE, HOLDER, 600_000)).toBe(true)
      server = await startTestControlPlane({ backend, clock, webhookPolicy: { allowPrivateAddresses: true } })
      receiver = await startWebhookReceiver()
    })
    afterAll(async () => {
      await server?.close()
      await backend?.close()
      await receiver?.stop()
    })

    async function post(path: string, payload: object): Promise<Answer> {
      const response = await server.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
      expect(response.statusCode, `${path}: ${response.body}`).toBe(200)
      return { status: response.statusCode, body: response.json() }
    }

    it('replays the key.created of a key created just before the endpoint, made after it', async () => {
      const { apiId } = (await post('apis.createApi', { name: 'lagging' })).body
      // A first endpoint places the deriver's cursors before the key is written.
      await post('webhooks.createEndpoint', { url: receiver.url, apiIds: [apiId], enabled: false })
      const { keyId } = (await post('keys.createKey', { apiId, name: 'made just before the endpoint' })).body
      clock.advance(1)
      const made = await post('webhooks.createEndpoint', { url: receiver.url, apiIds: [apiId] })
      receiver.useSecret(made.body.secret)
      // Let go: the deriver derives the key's creation after the endpoint's.
      await backend.store.webhooks.releaseLease(DERIVER_LEASE, HOLDER)
      const arrived = await waitFor(
        () => receiver.events.find((e) => e.type === 'key.created' && e.data.keyId === keyId),
        'the key.created of a key created before the endpoint',
      )
      expect(arrived.verified).toBe(true)
      expect(await backend.store.webhooks.getEvent(arrived.id)).toMatchObject({
        at: clock.now() - 1,
        madeAt: clock.now(),
      })
      const replayed = await post('webhooks.replay', { endpointId: made.body.endpointId, eventId: arrived.id })
      expect(replayed.body).toEqual({ queued: 1 })
    })
  })
}
