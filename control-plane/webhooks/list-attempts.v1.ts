import { Type } from 'typebox'
import { WEBHOOK_ATTEMPTS_KEPT, WEBHOOK_TESTS_KEPT } from '../../shared/webhook.js'
import { v1Route } from '../http/management-route.js'
import { EndpointIdField } from './wire/webhook-schemas.js'
import { listAttempts } from './list-attempts.js'

const Attempt = Type.Object({
  deliveryId: Type.String({ description: 'The delivery: one per event and endpoint' }),
  eventId: Type.String({ description: "The event's id, sent as `webhook-id`" }),
  eventType: Type.String({ description: 'The event type' }),
  at: Type.Number({ description: 'When the request was sent, unix milliseconds' }),
  attempt: Type.Integer({ description: 'Which attempt at the delivery: 1 for the first' }),
  status: Type.Optional(Type.Integer({ description: "The endpoint's HTTP status; absent when no answer came" })),
  error: Type.Optional(Type.String({ description: 'Why it failed: `timeout`, `refused: …`, `HTTP 500`…' })),
  latencyMs: Type.Integer({ description: 'How long the endpoint took, ms' }),
  responseSnippet: Type.Optional(Type.String({ description: "The first 1 KiB of the endpoint's answer" })),
  outcome: Type.Union(
    [Type.Literal('delivered'), Type.Literal('retry'), Type.Literal('dead'), Type.Literal('failed')],
    {
      description:
        'delivered; retry: it will be tried again; dead: given up (in `dead`); failed: a test event (webhooks.sendTest) not answered 2xx, never retried',
    },
  ),
  test: Type.Optional(
    Type.Literal(true, {
      description: `A test event webhooks.sendTest sent: example data, not kept, not replayable; the last ${WEBHOOK_TESTS_KEPT} are kept apart from the deliveries' attempts`,
    }),
  ),
})

const DeadDelivery = Type.Object({
  deliveryId: Type.String({ description: 'The delivery (replay its event with webhooks.replay)' }),
  eventId: Type.String({ description: "The event's id" }),
  attempts: Type.Integer({ description: 'Attempts made before it was given up' }),
  queuedAt: Type.Number({ description: 'When it was first queued, unix milliseconds' }),
})

/** webhooks.listAttempts: a GET; the delivery log of one endpoint. */
export const listAttemptsV1 = v1Route({
  operation: 'webhooks.listAttempts',
  method: 'GET',
  doc: {
    summary: "An endpoint's delivery log: its last attempts and its dead letters, newest first",
    tag: 'webhooks',
  },
  input: Type.Object({
    endpointId: EndpointIdField(),
    limit: Type.Integer({
      minimum: 1,
      maximum: WEBHOOK_ATTEMPTS_KEPT,
      default: 20,
      examples: [20],
      description: `Attempts at deliveries, tests' attempts and dead letters to answer, each (at most ${WEBHOOK_ATTEMPTS_KEPT} attempts at deliveries are kept, and ${WEBHOOK_TESTS_KEPT} tests apart from them)`,
    }),
  }),
  answer: Type.Object({
    attempts: Type.Array(Attempt, {
      description: "The last attempts at deliveries and, among them, the last tests' (marked `test`), newest first",
    }),
    dead: Type.Array(DeadDelivery, { description: 'Deliveries given up after the retry window, newest first' }),
  }),
  handle: async ({ endpointId, limit }, caller, deps) => {
    const { attempts, dead } = await listAttempts(deps, caller, { endpointId, limit })
    return {
      attempts,
      dead: dead.map(({ id, eventId, attempts: made, queuedAt }) => ({
        deliveryId: id,
        eventId,
        attempts: made,
        queuedAt,
      })),
    }
  },
})
