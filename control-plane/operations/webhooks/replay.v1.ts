import { Type } from 'typebox'
import { invalid } from '../../../shared/errors.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { v1Route } from '../../management-route.js'
import { EndpointIdField } from '../../schemas/webhook-schemas.js'
import { REPLAY_MAX, replay } from './replay.js'

/** webhooks.replay: one event again, or every event since a time. */
export const replayV1 = v1Route({
  operation: 'webhooks.replay',
  method: 'POST',
  doc: {
    summary: 'Send events to an endpoint again: one by id, or every one it subscribes to since a time',
    description: `Needs \`webhook.<endpointId|*>.replay\` and the rights to read what the endpoint is sent, as webhooks.createEndpoint (403). Replayed events keep their \`webhook-id\`. Events are kept for the retry window and a day; \`since\` replays at most ${REPLAY_MAX}, oldest first, never one from before the endpoint was created. A disabled endpoint is 412; an event the endpoint does not take (another type, another api, or older than the endpoint), 400.`,
    tag: 'webhooks',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'PRECONDITION_FAILED',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  input: Type.Object(
    {
      endpointId: EndpointIdField(),
      eventId: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: 'The event to send again (`webhook-id`)' }),
      ),
      since: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Send every kept event from this time on, unix milliseconds' }),
      ),
    },
    { additionalProperties: false, examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId, since: 0 }] },
  ),
  answer: Type.Object({ queued: Type.Integer({ description: 'Events queued for the endpoint' }) }),
  handle: async ({ endpointId, eventId, since }, caller, deps) => {
    if ((eventId === undefined) === (since === undefined))
      throw invalid('eventId', 'give exactly one of eventId and since')
    return replay(deps, caller, eventId !== undefined ? { endpointId, eventId } : { endpointId, since: since! })
  },
})
