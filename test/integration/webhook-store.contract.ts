import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { WebhookStore } from '../../shared/store/webhooks/webhook-store.js'
import {
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_CLAIM_ENDPOINTS,
  WEBHOOK_DEAD_KEPT,
  WEBHOOK_TESTS_KEPT,
  webhookDeliveryId,
  type ClaimLanes,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../../shared/webhook.js'
import { waitFor } from '../support/wait-for.js'

const unique = () => randomBytes(8).toString('hex')

/** A new endpoint's record (an id of the endpoints' own form, unless given). */
export function newWebhookEndpoint(id = `whep_${unique()}`): WebhookEndpoint {
  return {
    id,
    url: 'https://hooks.example.com/keygate',
    eventTypes: ['key.created'],
    enabled: true,
    secrets: [{ secret: `whsec_${randomBytes(32).toString('base64')}`, createdAt: 1 }],
    createdAt: 1,
  }
}

/** A new event at `at`. */
export function newWebhookEvent(at: number): WebhookEvent {
  return { id: `msg_${unique()}`, type: 'key.created', at, data: { keyId: `key_${unique()}` } }
}

function newAttempt(deliveryId: string, attempt: number): WebhookAttempt {
  return {
    deliveryId,
    eventId: deliveryId.split('.')[0]!,
    eventType: 'key.created',
    at: attempt,
    attempt,
    status: 500,
    error: 'HTTP 500',
    latencyMs: 3,
    outcome: 'retry',
  }
}

/** The delivery enqueue makes of an event for an endpoint. */
const queued = (event: WebhookEvent, endpointId: string, dueAt: number): WebhookDelivery => ({
  id: webhookDeliveryId(event.id, endpointId),
  eventId: event.id,
  endpointId,
  attempts: 0,
  queuedAt: dueAt,
})

const ids = (deliveries: { id: string }[]) => deliveries.map((d) => d.id)

/** Lanes that pass `busy` endpoints over until `untilMs` and let any other endpoint fill the claim. */
const passingOver = (busy: string[], untilMs: number): ClaimLanes => ({
  lanes: [{ room: 1_000, untilMs }],
  endpoints: new Map(busy.map((id) => [id, { lane: 0, room: 0 }])),
  others: { lane: 0, room: 1_000 },
})

const ERA_MS = 1_000_000_000
let lastEra = 4_000_000_000_000

/**
 * A test's own stretch of time (ERA_MS long), before every stretch handed out so far. The queue, the events and the
 * deadlines are one for the whole suite (on Redis, one set of keys): what earlier tests left there is due after
 * anything this test claims or takes, and is newer than anything it lists or prunes, so it never comes first.
 */
function era(): number {
  lastEra -= ERA_MS
  return lastEra
}

/** Leases and waits in these tests stay far below ERA_MS. */
const LEASE = 60_000

/** The WebhookStore contract (webhook-store.ts: `store.webhooks`), run by the store's contract. */
export function webhookStoreContract(webhooks: () => WebhookStore): void {
  /** A new endpoint, stored: its id (an endpoint's delivery log and dead letters are kept only while it exists). */
  const storedEndpoint = async (): Promise<string> => {
    const endpoint = newWebhookEndpoint()
    await webhooks().createEndpoint(endpoint)
    return endpoint.id
  }

  describe('webhooks: endpoints and cursors', () => {
    it('stores endpoints, lists them in id order, and replaces only those still there, at the revision read', async () => {
      const prefix = `whep_${unique()}`
      const [a, b] = [newWebhookEndpoint(`${prefix}a`), newWebhookEndpoint(`${prefix}b`)]
      await webhooks().createEndpoint(b)
      await webhooks().createEndpoint(a)
      expect(await webhooks().getEndpoint(a.id)).toEqual(a)
      const listed = (await webhooks().listEndpoints()).filter((e) => e.id.startsWith(prefix))
      expect(listed).toEqual([a, b])
      expect(ids(await webhooks().listEndpoints())).toEqual(ids(await webhooks().listEndpoints()).sort())

      const renamed = { ...a, description: 'renamed', updatedAt: 2 }
      expect(await webhooks().replaceEndpoint(renamed)).toBe('replaced')
      expect(await webhooks().getEndpoint(a.id)).toEqual({ ...renamed, revision: 1 })
      const gone = newWebhookEndpoint()
      expect(await webhooks().replaceEndpoint(gone)).toBe('gone')
      expect(await webhooks().getEndpoint(gone.id)).toBeNull()
    })

    // A change made from a copy read before another write landed would write back what that write undid.
    it('replaces an endpoint only from the revision it was read at: a stale copy changes nothing', async () => {
      const endpoint = newWebhookEndpoint()
      await webhooks().createEndpoint(endpoint)
      const [first, second] = [
        (await webhooks().getEndpoint(endpoint.id))!,
        (await webhooks().getEndpoint(endpoint.id))!,
      ]
      expect(await webhooks().replaceEndpoint({ ...first, enabled: false })).toBe('replaced')
      expect(await webhooks().replaceEndpoint({ ...second, description: 'stale' })).toBe('changed')
      const disabled = (await webhooks().getEndpoint(endpoint.id))!
      expect(disabled).toEqual({ ...endpoint, enabled: false, revision: 1 })
      // Read again, it is replaced; and again, its description (what JSON holds, revision-like text included) and all.
      const described = { ...disabled, description: '{"revision":7, "é" \u2028' }
      expect(await webhooks().replaceEndpoint(described)).toBe('replaced')
      expect(await webhooks().getEndpoint(endpoint.id)).toEqual({ ...described, revision: 2 })
      expect(await webhooks().replaceEndpoint({ ...disabled, enabled: true })).toBe('changed')
      expect(await webhooks().replaceEndpoint({ ...described, revision: 2, enabled: true })).toBe('replaced')
      expect((await webhooks().getEndpoint(endpoint.id))!).toMatchObject({ enabled: true, revision: 3 })
    })

    it('lets one of two replacements from the same revision at once win', async () => {
      const endpoint = newWebhookEndpoint()
      await webhooks().createEndpoint(endpoint)
      const outcomes = await Promise.all(
        ['one', 'two', 'three'].map((description) => webhooks().replaceEndpoint({ ...endpoint, description })),
      )
      expect(outcomes.sort()).toEqual(['changed', 'changed', 'replaced'])
      expect((await webhooks().getEndpoint(endpoint.id))!.revision).toBe(1)
    })

    it('deletes an endpoint with its delivery log and dead letters, and says whether it was there', async () => {
      const t = era()
      const [endpoint, other] = [newWebhookEndpoint(), newWebhookEndpoint()]
      await webhooks().createEndpoint(endpoint)
      await webhooks().createEndpoint(other)
      const event = newWebhookEvent(t)
      await webhooks().enqueue(event, [endpoint.id, other.id], t)
      for (const { id } of [endpoint, other]) {
        await webhooks().recordAttempt(id, newAttempt(webhookDeliveryId(event.id, id), 1))
        await webhooks().recordAttempt(id, { ...newAttempt(`msg_test_${unique()}.${id}`, 1), test: true })
        await webhooks().deadLetter(queued(event, id, t))
      }
      expect(await webhooks().deleteEndpoint(endpoint.id)).toBe(true)
      expect(await webhooks().getEndpoint(endpoint.id)).toBeNull()
      expect(ids(await webhooks().listEndpoints())).not.toContain(endpoint.id)
      expect(await webhooks().listAttempts(endpoint.id, 10)).toEqual([])
      expect(await webhooks().listTestAttempts(endpoint.id, 10)).toEqual([])
      expect(await webhooks().listDead(endpoint.id, 10)).toEqual([])
      expect(await webhooks().deleteEndpoint(endpoint.id)).toBe(false)
      // Another endpoint's are its own.
      expect(await webhooks().listAttempts(other.id, 10)).toHaveLength(1)
      expect(await webhooks().listTestAttempts(other.id, 10)).toHaveLength(1)
      expect(await webhooks().listDead(other.id, 10)).toHaveLength(1)
    })

    // A delivery to it may be in flight when it is deleted: settled after, it must not bring its lists back.
    it('keeps no delivery log nor dead letters for an endpoint once deleted; its deliveries still leave the queue', async () => {
      const t = era()
      const endpoint = await storedEndpoint()
      const [event, dead] = [newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(event, [endpoint], t)
      await webhooks().enqueue(dead, [endpoint], t)
      const depth = await webhooks().queueDepth()
      await webhooks().deleteEndpoint(endpoint)
      await webhooks().recordAttempt(endpoint, newAttempt(webhookDeliveryId(event.id, endpoint), 1))
      await webhooks().deadLetter(queued(dead, endpoint, t))
      expect(await webhooks().listAttempts(endpoint, 10)).toEqual([])
      expect(await webhooks().listDead(endpoint, 10)).toEqual([])
      expect(await webhooks().queueDepth()).toBe(depth - 1)
    })

    it('keeps the cursor of each shard derived from; others are absent', async () => {
      // The only test that writes cursors: shards 60–63 are untouched until here.
      expect((await webhooks().readCursors()).has(61)).toBe(false)
      await webhooks().writeCursor(61, { epoch: 'e1', rev: 7 })
      await webhooks().writeCursor(62, { epoch: '', rev: 0 })
      await webhooks().writeCursor(61, { epoch: 'e2', rev: 3 })
      const cursors = await webhooks().readCursors()
      expect(cursors.get(61)).toEqual({ epoch: 'e2', rev: 3 })
      expect(cursors.get(62)).toEqual({ epoch: '', rev: 0 })
      expect(cursors.has(60)).toBe(false)
      // A first cursor is placed only where there is none.
      await webhooks().placeCursor(63, { epoch: 'e1', rev: 5 })
      await webhooks().placeCursor(63, { epoch: 'e2', rev: 1 })
      await webhooks().placeCursor(61, { epoch: 'e1', rev: 1 })
      const placed = await webhooks().readCursors()
      expect(placed.get(63)).toEqual({ epoch: 'e1', rev: 5 })
      expect(placed.get(61)).toEqual({ epoch: 'e2', rev: 3 })
      // The credit notices' cursors, alike.
      expect((await webhooks().readNoticeCursors()).has(61)).toBe(false)
      await webhooks().writeNoticeCursor(61, '5-0')
      await webhooks().writeNoticeCursor(61, '7-0')
      await webhooks().placeNoticeCursor(61, '6-0')
      await webhooks().placeNoticeCursor(63, '0-0')
      await webhooks().placeNoticeCursor(63, '9-0')
      const notices = await webhooks().readNoticeCursors()
      expect([notices.get(61), notices.get(63), notices.has(62)]).toEqual(['7-0', '0-0', false])
      expect(await webhooks().moveNoticeCursor(61, '6-0', '8-0')).toBe(false)
      expect(await webhooks().moveNoticeCursor(62, '', '8-0')).toBe(false)
      expect(await webhooks().moveNoticeCursor(61, '7-0', '8-0')).toBe(true)
      expect(await webhooks().moveNoticeCursor(63, '0-0', '1-0')).toBe(true)
      const movedNotices = await webhooks().readNoticeCursors()
      expect([movedNotices.get(61), movedNotices.get(63), movedNotices.has(62)]).toEqual(['8-0', '1-0', false])
      // A cursor moves only from where it was read (epoch and revision); an absent one not at all.
      const big = { epoch: 'e3', rev: 2 ** 53 - 1 }
      expect(await webhooks().moveCursor(61, { epoch: 'e2', rev: 2 }, big)).toBe(false)
      expect(await webhooks().moveCursor(61, { epoch: 'e1', rev: 3 }, big)).toBe(false)
      expect(await webhooks().moveCursor(60, { epoch: '', rev: 0 }, big)).toBe(false)
      expect(await webhooks().moveCursor(61, { epoch: 'e2', rev: 3 }, big)).toBe(true)
      expect(await webhooks().moveCursor(61, big, { epoch: 'e3', rev: 1 })).toBe(true)
      expect(await webhooks().moveCursor(62, { epoch: '', rev: 0 }, { epoch: 'e1', rev: 4 })).toBe(true)
      const moved = await webhooks().readCursors()
      expect([moved.get(61), moved.get(62), moved.has(60)]).toEqual([
        { epoch: 'e3', rev: 1 },
        { epoch: 'e1', rev: 4 },
        false,
      ])
    })
  })

  describe('webhooks: events and the delivery queue', () => {
    it('keeps an event once (the same id is the same event), with or without endpoints to deliver it to', async () => {
      const t = era()
      const event = newWebhookEvent(t)
      await webhooks().enqueue(event, [], t)
      expect(await webhooks().getEvent(event.id)).toEqual(event)
      await webhooks().enqueue({ ...event, data: { other: true } }, [], t)
      expect(await webhooks().getEvent(event.id)).toEqual(event)
      expect(await webhooks().getEvent(`msg_${unique()}`)).toBeNull()
    })

    it('queues one delivery per event and endpoint: enqueueing the same event again queues nothing', async () => {
      const t = era()
      const event = newWebhookEvent(t)
      const endpoint = `whep_${unique()}`
      // Due at the same time: claimed in the order of their ids (the event's, then the endpoint's).
      const [one, two] = [`${endpoint}a`, `${endpoint}b`]
      const depth = await webhooks().queueDepth()
      await webhooks().enqueue(event, [one, two], t + 10)
      expect((await webhooks().queueDepth()) - depth).toBe(2)
      // Derived again, later: neither queued twice nor moved.
      await webhooks().enqueue(event, [one, two, one], t + 500)
      expect((await webhooks().queueDepth()) - depth).toBe(2)
      expect(await webhooks().claimDue(t + 10, LEASE, 10)).toEqual([
        queued(event, one, t + 10),
        queued(event, two, t + 10),
      ])
      // One under way keeps its attempts when derived again.
      await webhooks().retry(webhookDeliveryId(event.id, one), 1, t + 20)
      await webhooks().enqueue(event, [one], t + 20)
      expect(await webhooks().claimDue(t + 20, LEASE, 10)).toEqual([{ ...queued(event, one, t + 10), attempts: 1 }])
      expect((await webhooks().queueDepth()) - depth).toBe(2)
    })

    it('claims deliveries due, oldest first, at most `limit`; those due later stay', async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const events = [30, 10, 20, 40].map((offset) => ({ event: newWebhookEvent(t), dueAt: t + offset }))
      for (const { event, dueAt } of events) await webhooks().enqueue(event, [endpoint], dueAt)
      const [at30, at10, at20, at40] = events.map(({ event, dueAt }) => queued(event, endpoint, dueAt))
      expect(await webhooks().claimDue(t + 35, LEASE, 2)).toEqual([at10, at20])
      expect(await webhooks().claimDue(t + 35, LEASE, 0)).toEqual([])
      expect(await webhooks().claimDue(t + 35, LEASE, 10)).toEqual([at30])
      expect(await webhooks().claimDue(t + 40, LEASE, 10)).toEqual([at40])
    })

    it('makes a claimed delivery due again when its lease runs out, unless it is done by then', async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const [event, done] = [newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(event, [endpoint], t)
      await webhooks().enqueue(done, [endpoint], t)
      expect(ids(await webhooks().claimDue(t, 1_000, 10)).sort()).toEqual(
        [webhookDeliveryId(event.id, endpoint), webhookDeliveryId(done.id, endpoint)].sort(),
      )
      await webhooks().complete(webhookDeliveryId(done.id, endpoint))
      expect(await webhooks().claimDue(t + 999, 1_000, 10)).toEqual([])
      expect(await webhooks().claimDue(t + 1_000, 1_000, 10)).toEqual([queued(event, endpoint, t)])
      expect(await webhooks().claimDue(t + 1_000, 1_000, 10)).toEqual([])
    })

    it("passes over busy endpoints' deliveries, due again later as they were, and claims those behind them", async () => {
      const t = era()
      const [busy, free] = [`whep_${unique()}`, `whep_${unique()}`]
      const backlog = Array.from({ length: 30 }, () => newWebhookEvent(t))
      for (const event of backlog) await webhooks().enqueue(event, [busy], t)
      const behind = newWebhookEvent(t)
      await webhooks().enqueue(behind, [free], t + 1)
      const passedOver = passingOver([busy], t + 500)
      expect(await webhooks().claimDue(t + 1, LEASE, 2, passedOver)).toEqual([queued(behind, free, t + 1)])
      expect(await webhooks().claimDue(t + 499, LEASE, 100)).toEqual([])
      const again = await webhooks().claimDue(t + 500, LEASE, 100)
      expect(again.map((d) => d.id).sort()).toEqual(backlog.map((e) => webhookDeliveryId(e.id, busy)).sort())
      expect(again.every((d) => d.attempts === 0 && d.queuedAt === t)).toBe(true)
    })

    it("takes at most each endpoint's and each lane's room, oldest first; the rest due again at their lane's time", async () => {
      const t = era()
      // An event's deliveries due at once are claimed in the order of their endpoints' ids: these.
      const base = `whep_${unique()}`
      const [healthy, other, failingA, failingB, fresh] = ['a', 'b', 'c', 'd', 'e'].map((n) => `${base}${n}`)
      const events = Array.from({ length: 4 }, (_, i) => ({ event: newWebhookEvent(t), dueAt: t + i }))
      const all = [healthy!, other!, failingA!, failingB!, fresh!, `${fresh}x`]
      for (const { event, dueAt } of events) await webhooks().enqueue(event, all, dueAt)
      const lanes: ClaimLanes = {
        lanes: [
          { room: 3, untilMs: t + 200 },
          { room: 1, untilMs: t + 1_000 },
          { room: 10, untilMs: t + 300 },
        ],
        endpoints: new Map([
          [healthy!, { lane: 0, room: 2 }],
          [other!, { lane: 0, room: 4 }],
          [failingA!, { lane: 1, room: 1 }],
          [failingB!, { lane: 1, room: 1 }],
        ]),
        // Unlisted: one each, in the third lane.
        others: { lane: 2, room: 1 },
      }
      const claimed = await webhooks().claimDue(t + 10, LEASE, 100, lanes)
      const [first, second] = events.map(
        ({ event, dueAt }) =>
          (endpoint: string) =>
            queued(event, endpoint, dueAt),
      )
      // Endpoint by endpoint (in the order of their first due delivery, then of their ids), each one's oldest first:
      // `healthy` its room of 2, `other` what is left of the first lane, and one to everyone but failingB (its lane
      // is full by then).
      expect(claimed).toEqual([
        first!(healthy!),
        second!(healthy!),
        first!(other!),
        first!(failingA!),
        first!(fresh!),
        first!(`${fresh}x`),
      ])
      // Those that had room of their own but not in their lane (`other`, failingB) are first at the next claim; those
      // that used their own room are passed over, due again at their lane's time; attempts as they were.
      const waited = await webhooks().claimDue(t + 11, LEASE, 100)
      expect(waited.map((d) => d.endpointId).sort()).toEqual(
        [other!, other!, other!, ...Array(4).fill(failingB!)].sort(),
      )
      expect(ids(await webhooks().claimDue(t + 199, LEASE, 100))).toEqual([])
      const lane0 = await webhooks().claimDue(t + 200, LEASE, 100)
      expect(lane0.map((d) => d.endpointId)).toEqual([healthy!, healthy!])
      const lane2 = await webhooks().claimDue(t + 300, LEASE, 100)
      expect(lane2.map((d) => d.endpointId).sort()).toEqual(
        [fresh!, fresh!, fresh!, `${fresh}x`, `${fresh}x`, `${fresh}x`].sort(),
      )
      const lane1 = await webhooks().claimDue(t + 1_000, LEASE, 100)
      expect(lane1.map((d) => d.endpointId)).toEqual([failingA!, failingA!, failingA!])
      expect([...waited, ...lane0, ...lane1, ...lane2].every((d) => d.attempts === 0)).toBe(true)
    })

    // The room is what the lanes had when asked: each delivery taken uses one of it, and the claim stops only when
    // all of it is used (or `limit` is reached), never when what it took equals what is left.
    it("fills every lane's room: an endpoint with room for 4 and 6 due gets 4, two lanes of 3 and 2 get 5", async () => {
      const t = era()
      const base = `whep_${unique()}`
      const [wide, a, b] = [`${base}a`, `${base}b`, `${base}c`]
      const events = Array.from({ length: 6 }, (_, i) => ({ event: newWebhookEvent(t), dueAt: t + i }))
      for (const { event, dueAt } of events) await webhooks().enqueue(event, [wide], dueAt)
      const oneLane: ClaimLanes = {
        lanes: [{ room: 4, untilMs: t + 500 }],
        endpoints: new Map([[wide, { lane: 0, room: 4 }]]),
        others: { lane: 0, room: 0 },
      }
      const claimed = await webhooks().claimDue(t + 10, LEASE, 100, oneLane)
      expect(claimed).toEqual(events.slice(0, 4).map(({ event, dueAt }) => queued(event, wide, dueAt)))

      const t2 = era()
      for (let i = 0; i < 3; i++) await webhooks().enqueue(newWebhookEvent(t2), [a, b], t2 + i)
      const twoLanes: ClaimLanes = {
        lanes: [
          { room: 3, untilMs: t2 + 500 },
          { room: 2, untilMs: t2 + 500 },
        ],
        endpoints: new Map([
          [a, { lane: 0, room: 3 }],
          [b, { lane: 1, room: 3 }],
        ]),
        others: { lane: 0, room: 0 },
      }
      const both = await webhooks().claimDue(t2 + 10, LEASE, 100, twoLanes)
      expect(both.map((d) => d.endpointId).sort()).toEqual([a, a, a, b, b])
    })

    // Endpoints left with room of their own when their lane filled are first at the next claim: a lane's endpoints take
    // turns, and one with a long backlog never keeps the lane from another whose id sorts after it.
    it("lets a full lane's endpoints take turns, claim after claim", async () => {
      const t = era()
      const base = `whep_${unique()}`
      const endpoints = ['a', 'b', 'c'].map((n) => `${base}${n}`)
      for (let i = 0; i < 10; i++) await webhooks().enqueue(newWebhookEvent(t), endpoints, t + i)
      const served: string[][] = []
      for (const at of [t + 100, t + 300, t + 500]) {
        // The second lane has room (nothing of its own is due): the claim is not full when the first lane is.
        const lanes: ClaimLanes = {
          lanes: [
            { room: 4, untilMs: at + 200 },
            { room: 10, untilMs: at + 200 },
          ],
          endpoints: new Map(endpoints.map((id) => [id, { lane: 0, room: 4 }])),
          others: { lane: 1, room: 0 },
        }
        served.push([...new Set((await webhooks().claimDue(at, LEASE, 100, lanes)).map((d) => d.endpointId))])
      }
      expect(served).toEqual(endpoints.map((id) => [id]))
    })

    // A claim used to look at each due delivery in due order, so a backlog in front filled the claim's scan.
    it("claims another endpoint's delivery behind one's backlog of 1000 at once, in the first claim", async () => {
      const t = era()
      const [busy, free] = [`whep_${unique()}`, `whep_${unique()}`]
      const backlog = Array.from({ length: 1_000 }, () => newWebhookEvent(t))
      await Promise.all(backlog.map((event) => webhooks().enqueue(event, [busy], t)))
      const behind = newWebhookEvent(t)
      await webhooks().enqueue(behind, [free], t + 1)
      const passedOver = passingOver([busy], t + 500)
      expect(await webhooks().claimDue(t + 1, LEASE, 1, passedOver)).toEqual([queued(behind, free, t + 1)])
      // The backlog was passed over as it was: all of it due again at its lane's time, none claimed before.
      expect(await webhooks().claimDue(t + 499, LEASE, 10)).toEqual([])
      expect(await webhooks().claimDue(t + 500, LEASE, 2_000)).toHaveLength(1_000)
    })

    it(`looks at ${WEBHOOK_CLAIM_ENDPOINTS} endpoints per claim at most; those passed over no longer stand in front`, async () => {
      const t = era()
      const base = `whep_${unique()}`
      // Ids in the order they are looked at (all due at once): the busy ones first.
      const busy = Array.from({ length: WEBHOOK_CLAIM_ENDPOINTS }, (_, i) => `${base}a${String(i).padStart(4, '0')}`)
      const free = `${base}b`
      const event = newWebhookEvent(t)
      await webhooks().enqueue(event, [...busy, free], t)
      const passedOver = passingOver(busy, t + 500)
      expect(await webhooks().claimDue(t + 1, LEASE, 1, passedOver)).toEqual([])
      expect(await webhooks().claimDue(t + 1, LEASE, 1, passedOver)).toEqual([queued(event, free, t)])
    })

    // Passed over, an endpoint is looked at again at its lane's time, or when the lease of one of its deliveries
    // claimed before ends, if that comes first: it is never left longer than a lease.
    it("looks again at an endpoint passed over when a lease of its ends, if that is before its lane's time", async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const [leased, waiting] = [newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(leased, [endpoint], t)
      await webhooks().enqueue(waiting, [endpoint], t + 1)
      expect(await webhooks().claimDue(t + 1, 100, 1)).toEqual([queued(leased, endpoint, t)])
      expect(await webhooks().claimDue(t + 2, LEASE, 10, passingOver([endpoint], t + 10_000))).toEqual([])
      const back = await webhooks().claimDue(t + 101, LEASE, 10)
      expect(ids(back).sort()).toEqual(
        [webhookDeliveryId(leased.id, endpoint), webhookDeliveryId(waiting.id, endpoint)].sort(),
      )
    })

    it('queues one endpoint again after all its deliveries were done: a new one is claimed when due', async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const [done, dead, next] = [newWebhookEvent(t), newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(done, [endpoint], t)
      await webhooks().enqueue(dead, [endpoint], t)
      await webhooks().complete(webhookDeliveryId(done.id, endpoint))
      await webhooks().deadLetter(queued(dead, endpoint, t))
      expect(await webhooks().claimDue(t + 1, LEASE, 10)).toEqual([])
      await webhooks().enqueue(next, [endpoint], t + 5)
      expect(await webhooks().claimDue(t + 4, LEASE, 10)).toEqual([])
      expect(await webhooks().claimDue(t + 5, LEASE, 10)).toEqual([queued(next, endpoint, t + 5)])
    })

    it('gives each delivery due to one of two callers claiming at once', async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const events = Array.from({ length: 20 }, () => newWebhookEvent(t))
      for (const [i, event] of events.entries()) await webhooks().enqueue(event, [endpoint], t + i)
      const [first, second] = await Promise.all([
        webhooks().claimDue(t + 100, LEASE, 15),
        webhooks().claimDue(t + 100, LEASE, 15),
      ])
      const claimed = [...ids(first), ...ids(second)]
      expect(claimed.sort()).toEqual(events.map((e) => webhookDeliveryId(e.id, endpoint)).sort())
    })

    it('retries a queued delivery at its new time with its attempts; a delivery done is not queued again', async () => {
      const t = era()
      const endpoint = `whep_${unique()}`
      const [event, done] = [newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(event, [endpoint], t)
      await webhooks().enqueue(done, [endpoint], t)
      const id = webhookDeliveryId(event.id, endpoint)
      await webhooks().claimDue(t, LEASE, 10)
      await webhooks().retry(id, 1, t + 500)
      expect(await webhooks().claimDue(t + 499, LEASE, 10)).toEqual([])
      expect(await webhooks().claimDue(t + 500, LEASE, 10)).toEqual([{ ...queued(event, endpoint, t), attempts: 1 }])

      const depth = await webhooks().queueDepth()
      await webhooks().complete(webhookDeliveryId(done.id, endpoint))
      expect(await webhooks().queueDepth()).toBe(depth - 1)
      await webhooks().retry(webhookDeliveryId(done.id, endpoint), 2, t + 600)
      await webhooks().retry(webhookDeliveryId(`msg_${unique()}`, endpoint), 1, t + 600)
      expect(await webhooks().queueDepth()).toBe(depth - 1)
      expect(await webhooks().claimDue(t + 600 + LEASE, LEASE, 10)).toEqual([
        { ...queued(event, endpoint, t), attempts: 1 },
      ])
    })

    it('moves a delivery given up from the queue into its dead letters, newest first, once', async () => {
      const t = era()
      const endpoint = await storedEndpoint()
      const [older, newer] = [newWebhookEvent(t), newWebhookEvent(t)]
      await webhooks().enqueue(older, [endpoint], t)
      await webhooks().enqueue(newer, [endpoint], t)
      const depth = await webhooks().queueDepth()
      const [deadOlder, deadNewer] = [older, newer].map((e) => ({ ...queued(e, endpoint, t), attempts: 8 }))
      await webhooks().deadLetter(deadOlder!)
      await webhooks().deadLetter(deadNewer!)
      expect(await webhooks().queueDepth()).toBe(depth - 2)
      expect(await webhooks().claimDue(t + 1, LEASE, 10)).toEqual([])
      expect(await webhooks().listDead(endpoint, 10)).toEqual([deadNewer, deadOlder])
      expect(await webhooks().listDead(endpoint, 1)).toEqual([deadNewer])
      expect(await webhooks().listDead(endpoint, 0)).toEqual([])
      // Not queued any more (another caller finished it): not dead a second time.
      await webhooks().deadLetter(deadOlder!)
      expect(await webhooks().listDead(endpoint, 10)).toEqual([deadNewer, deadOlder])
      expect(await webhooks().listDead(`whep_${unique()}`, 10)).toEqual([])
    })

    it(`keeps the last ${WEBHOOK_DEAD_KEPT} dead letters of an endpoint`, async () => {
      const t = era()
      const endpoint = await storedEndpoint()
      const events = Array.from({ length: WEBHOOK_DEAD_KEPT + 2 }, () => newWebhookEvent(t))
      await Promise.all(events.map((event) => webhooks().enqueue(event, [endpoint], t)))
      for (const event of events) await webhooks().deadLetter(queued(event, endpoint, t))
      const dead = await webhooks().listDead(endpoint, WEBHOOK_DEAD_KEPT + 10)
      expect(dead).toHaveLength(WEBHOOK_DEAD_KEPT)
      expect(dead[0]!.eventId).toBe(events.at(-1)!.id)
      expect(dead.at(-1)!.eventId).toBe(events[2]!.id)
    })
  })

  describe('webhooks: delivery log, event retention, deadlines and leases', () => {
    it(`logs an endpoint's attempts newest first, keeping the last ${WEBHOOK_ATTEMPTS_KEPT}`, async () => {
      const [endpoint, other] = [await storedEndpoint(), await storedEndpoint()]
      const deliveryId = webhookDeliveryId(`msg_${unique()}`, endpoint)
      for (let attempt = 1; attempt <= WEBHOOK_ATTEMPTS_KEPT + 2; attempt++)
        await webhooks().recordAttempt(endpoint, newAttempt(deliveryId, attempt))
      await webhooks().recordAttempt(other, { ...newAttempt(deliveryId, 1), outcome: 'delivered', status: 204 })
      const attempts = await webhooks().listAttempts(endpoint, WEBHOOK_ATTEMPTS_KEPT + 10)
      expect(attempts.map((a) => a.attempt)).toEqual(
        Array.from({ length: WEBHOOK_ATTEMPTS_KEPT }, (_, i) => WEBHOOK_ATTEMPTS_KEPT + 2 - i),
      )
      expect(attempts[0]).toEqual(newAttempt(deliveryId, WEBHOOK_ATTEMPTS_KEPT + 2))
      expect(await webhooks().listAttempts(endpoint, 2)).toEqual(attempts.slice(0, 2))
      expect(await webhooks().listAttempts(endpoint, 0)).toEqual([])
      expect(await webhooks().listAttempts(other, 10)).toEqual([
        { ...newAttempt(deliveryId, 1), outcome: 'delivered', status: 204 },
      ])
    })

    // A root key that may only send tests would otherwise push every real attempt out of the log.
    it(`keeps tests' attempts apart, the last ${WEBHOOK_TESTS_KEPT}: however many, they push no delivery's attempt out`, async () => {
      const endpoint = await storedEndpoint()
      const deliveryId = webhookDeliveryId(`msg_${unique()}`, endpoint)
      await webhooks().recordAttempt(endpoint, newAttempt(deliveryId, 1))
      const test = (n: number): WebhookAttempt => ({ ...newAttempt(`msg_test_${n}.${endpoint}`, 1), at: n, test: true })
      for (let n = 1; n <= WEBHOOK_ATTEMPTS_KEPT + 1; n++) await webhooks().recordAttempt(endpoint, test(n))
      expect(await webhooks().listAttempts(endpoint, WEBHOOK_ATTEMPTS_KEPT)).toEqual([newAttempt(deliveryId, 1)])
      const tests = await webhooks().listTestAttempts(endpoint, WEBHOOK_ATTEMPTS_KEPT)
      expect(tests).toEqual(Array.from({ length: WEBHOOK_TESTS_KEPT }, (_, i) => test(WEBHOOK_ATTEMPTS_KEPT + 1 - i)))
      expect(await webhooks().listTestAttempts(endpoint, 2)).toEqual(tests.slice(0, 2))
      expect(await webhooks().listTestAttempts(endpoint, 0)).toEqual([])
    })

    it('lists kept events from a time, oldest first, and forgets those older than the retention', async () => {
      const t = era()
      const events = [3, 1, 2, 4].map((offset) => newWebhookEvent(t + offset))
      for (const event of events) await webhooks().enqueue(event, [], t)
      const [at3, at1, at2, at4] = events
      expect(await webhooks().listEvents(t + 2, 3)).toEqual([at2, at3, at4])
      expect(await webhooks().listEvents(t, 2)).toEqual([at1, at2])
      expect(await webhooks().listEvents(t, 0)).toEqual([])
      await webhooks().pruneEvents(t + 3)
      expect(await webhooks().getEvent(at1!.id)).toBeNull()
      expect(await webhooks().getEvent(at2!.id)).toBeNull()
      expect(await webhooks().listEvents(t, 2)).toEqual([at3, at4])
    })

    // An event derived late happened long before it was made: replay and retention go by when it was made.
    it('lists and forgets events by when they were made, and goes on after an event, ties in id order', async () => {
      const t = era()
      const made = (madeAt: number, at = t): WebhookEvent => ({ ...newWebhookEvent(at), madeAt })
      const [late, early] = [made(t + 5, t + 1), made(t + 2, t + 4)]
      const ties = Array.from({ length: 4 }, () => made(t + 3)).sort((a, b) => (a.id < b.id ? -1 : 1))
      for (const event of [late, ...ties, early]) await webhooks().enqueue(event, [], t)
      const order = [early, ...ties, late]
      expect(await webhooks().listEvents(t + 3, 5)).toEqual(order.slice(1))
      expect(await webhooks().getEvent(late.id)).toEqual(late)
      // Paged after the last one listed: each event once, whatever ties its time.
      const paged: WebhookEvent[] = []
      let page = await webhooks().listEvents(t, 2)
      while (page.length > 0 && paged.length < order.length) {
        paged.push(...page)
        const last = page.at(-1)!
        page = await webhooks().listEvents(last.madeAt!, 2, last.id)
      }
      expect(paged).toEqual(order)
      // After an event forgotten meanwhile: from its time on (the events of earlier tests come after these).
      await webhooks().pruneEvents(t + 3)
      expect(await webhooks().getEvent(early.id)).toBeNull()
      expect(await webhooks().getEvent(late.id)).toEqual(late)
      expect(await webhooks().listEvents(early.madeAt!, 5, early.id)).toEqual(order.slice(1))
      await webhooks().pruneEvents(t + 4)
      expect(await webhooks().listEvents(ties[1]!.madeAt!, 1, ties[1]!.id)).toEqual([late])
    })

    it('claims deadlines due in time order; a deadline set again moves, one unscheduled never fires', async () => {
      const t = era()
      const member = (name: string) => `key.expiring|key_${unique()}|${name}`
      const [early, late, moved, dropped] = ['early', 'late', 'moved', 'dropped'].map(member)
      await webhooks().schedule(late!, t + 20)
      await webhooks().schedule(early!, t + 10)
      await webhooks().schedule(moved!, t + 5)
      await webhooks().schedule(moved!, t + 30)
      await webhooks().schedule(dropped!, t + 1)
      await webhooks().unschedule(dropped!)
      expect(await webhooks().claimDeadlines(t + 20, LEASE, 1)).toEqual([early])
      expect(await webhooks().claimDeadlines(t + 20, LEASE, 0)).toEqual([])
      expect(await webhooks().claimDeadlines(t + 25, LEASE, 10)).toEqual([late])
      expect(await webhooks().claimDeadlines(t + 25, LEASE, 10)).toEqual([])
      expect(await webhooks().claimDeadlines(t + 30, LEASE, 10)).toEqual([moved])
    })

    // Between a deadline's claim and its event being queued, its caller may die: the deadline outlives it.
    it('makes a claimed deadline due again when its lease runs out, unless it is unscheduled by then', async () => {
      const t = era()
      const [fired, lost] = ['fired', 'lost'].map((name) => `key.expired|key_${unique()}|${name}`)
      await webhooks().schedule(fired!, t)
      await webhooks().schedule(lost!, t)
      expect((await webhooks().claimDeadlines(t, 1_000, 10)).sort()).toEqual([fired, lost].sort())
      await webhooks().unschedule(fired!)
      expect(await webhooks().claimDeadlines(t + 999, 1_000, 10)).toEqual([])
      expect(await webhooks().claimDeadlines(t + 1_000, 1_000, 10)).toEqual([lost])
      expect(await webhooks().claimDeadlines(t + 1_000, 1_000, 10)).toEqual([])
    })

    it('gives each deadline due to one of two callers claiming at once', async () => {
      const t = era()
      const members = Array.from({ length: 40 }, (_, i) => `key.expired|key_${unique()}|${i}`)
      for (const [i, member] of members.entries()) await webhooks().schedule(member, t + i)
      const [first, second] = await Promise.all([
        webhooks().claimDeadlines(t + 100, LEASE, 30),
        webhooks().claimDeadlines(t + 100, LEASE, 30),
      ])
      expect([...first, ...second].sort()).toEqual([...members].sort())
      expect(await webhooks().claimDeadlines(t + 100, LEASE, 100)).toEqual([])
    })

    it('holds a lease for one holder at a time: renewed by its holder, taken by another once it runs out', async () => {
      const name = `derive-${unique()}`
      expect(await webhooks().holdLease(name, 'a', LEASE)).toBe(true)
      expect(await webhooks().holdLease(name, 'b', LEASE)).toBe(false)
      expect(await webhooks().holdLease(name, 'a', LEASE)).toBe(true)
      expect(await webhooks().holdLease(`derive-${unique()}`, 'b', LEASE)).toBe(true)
      // Renewed for 1 ms: b gets it as soon as that has passed, and then a does not.
      expect(await webhooks().holdLease(name, 'a', 1)).toBe(true)
      await waitFor(() => webhooks().holdLease(name, 'b', LEASE), 'the lease to run out', 2_000, 2)
      expect(await webhooks().holdLease(name, 'a', LEASE)).toBe(false)
    })

    it('gives a lease up only for its holder', async () => {
      const name = `derive-${unique()}`
      expect(await webhooks().holdLease(name, 'a', LEASE)).toBe(true)
      await webhooks().releaseLease(name, 'b')
      expect(await webhooks().holdLease(name, 'b', LEASE)).toBe(false)
      await webhooks().releaseLease(name, 'a')
      expect(await webhooks().holdLease(name, 'b', LEASE)).toBe(true)
    })
  })
}
