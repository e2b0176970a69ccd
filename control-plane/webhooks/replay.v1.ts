import { Type } from 'typebox'
import { invalid } from '../../shared/errors/errors.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EndpointIdField } from './wire/webhook-schemas.js'
import { REPLAY_CURSOR_MAX_LENGTH } from './replay-cursor.js'
import { REPLAY_MAX, REPLAY_SCAN, replay, type ReplayInput } from './replay.js'

/** webhooks.replay: one event again, or every event since a time. */
export const replayV1 = v1Route({
  operation: 'webhooks.replay',
  method: 'POST',
  doc: {
    summary: 'Send events to an endpoint again: one by id, or every one it subscribes to since a time',
    description: `Needs \`webhook.<endpointId|*>.replay\` and the rights to read what the endpoint is sent, as webhooks.createEndpoint (403). Replayed events keep their \`webhook-id\`. Events are kept for the retry window and a day. \`since\` replays the events made from then on, in the order they were made, never one made before the endpoint began receiving at its URL (its creation, or its last change of \`url\`); one call queues at most ${REPLAY_MAX} and looks at ${REPLAY_SCAN} kept events at most: when it stops before the newest, its answer has a \`cursor\`, and a call with that \`cursor\` (instead of \`since\`) goes on from there. A disabled endpoint is 412; an event the endpoint does not take (another type, another api, or made before it received at its URL), 400.`,
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
        Type.Integer({ minimum: 0, description: 'Send every kept event made from this time on, unix milliseconds' }),
      ),
      cursor: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: REPLAY_CURSOR_MAX_LENGTH,
          description: "Go on from where a replay stopped: the `cursor` of that call's answer",
        }),
      ),
    },
    { additionalProperties: false, examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId, since: 0 }] },
  ),
  answer: Type.Object({
    queued: Type.Integer({ description: 'Events queued for the endpoint' }),
    cursor: Type.Optional(
      Type.String({
        description: 'Present when the call stopped before the newest kept event: call again with it to go on',
      }),
    ),
  }),
  handle: async ({ endpointId, eventId, since, cursor }, caller, deps) => {
    const given = [eventId, since, cursor].filter((from) => from !== undefined)
    if (given.length !== 1) throw invalid('eventId', 'give exactly one of eventId, since and cursor')
    const from: ReplayInput =
      eventId !== undefined
        ? { endpointId, eventId }
        : since !== undefined
          ? { endpointId, since }
          : { endpointId, cursor: cursor! }
    return replay(deps, caller, from)
  },
})
