import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { Nullable } from '../keys/wire/key-schemas.js'
import { EmptyResponse } from '../wire/fields.js'
import {
  EndpointApiIds,
  EndpointDescription,
  EndpointIdField,
  EndpointUrlField,
  EventTypes,
  ExportChangeField,
} from './wire/webhook-schemas.js'
import { updateEndpoint } from './update-endpoint.js'

const UpdateEndpointBody = Type.Object(
  {
    endpointId: EndpointIdField('The endpoint to change'),
    url: Type.Optional(EndpointUrlField('Where events are sent from now on (checked again)')),
    description: Type.Optional(
      Nullable(EndpointDescription('What it is, for people'), 'What it is, for people; null clears it'),
    ),
    eventTypes: Type.Optional(EventTypes('The event types it receives from now on')),
    apiIds: Type.Optional(EndpointApiIds('The apis it is scoped to from now on')),
    enabled: Type.Optional(Type.Boolean({ description: 'false: nothing is sent to it until it is true again' })),
    export: Type.Optional(ExportChangeField()),
  },
  {
    additionalProperties: false,
    examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId, enabled: false }],
  },
)

/** webhooks.updateEndpoint: Keygate's own, in v1 style. */
export const updateEndpointV1 = v1Route({
  operation: 'webhooks.updateEndpoint',
  method: 'POST',
  doc: {
    summary: 'Change a webhook endpoint: each field given replaces the one it had',
    description:
      'Needs `webhook.<endpointId|*>.update_endpoint`. A change of what it is sent or where (`url`, `apiIds`, `eventTypes`, `enabled: true`) also needs the rights to read what it is sent after it, as webhooks.createEndpoint (403); disabling it or changing its description does not. A new `url` starts what a replay may send anew: only events made from then on; the new `url` of a meter export needs its `export.credential` given with it (400: the credential goes only where it was given for). The change is made over the endpoint as it is: when another change of it lands first, this one is made again (checks and all) over that one, never writing back what it undid, and 409 if they keep landing.',
    tag: 'webhooks',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'CONFLICT',
      'PRECONDITION_FAILED',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  input: UpdateEndpointBody,
  answer: EmptyResponse,
  handle: async (body, caller, deps) => {
    await updateEndpoint(deps, caller, body)
    return {}
  },
})
