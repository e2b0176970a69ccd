import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import {
  EndpointApiIds,
  EndpointDescription,
  EndpointUrlField,
  EventTypes,
  ExportInputField,
  SecretField,
} from './wire/webhook-schemas.js'
import { createEndpoint } from './create-endpoint.js'

const CreateEndpointBody = Type.Object(
  {
    url: EndpointUrlField('Where events are sent (a POST each)'),
    description: Type.Optional(EndpointDescription('What it is, for people')),
    eventTypes: Type.Optional(EventTypes('The event types it receives')),
    apiIds: Type.Optional(EndpointApiIds('The apis it is scoped to')),
    enabled: Type.Optional(Type.Boolean({ description: 'Whether events are sent to it (default true)' })),
    export: Type.Optional(ExportInputField()),
  },
  {
    additionalProperties: false,
    examples: [
      { url: WIRE_EXAMPLES.webhookUrl, eventTypes: ['key.created', 'key.deleted'], apiIds: [WIRE_EXAMPLES.apiId] },
    ],
  },
)

/** webhooks.createEndpoint: Keygate's own, in v1 style. */
export const createEndpointV1 = v1Route({
  operation: 'webhooks.createEndpoint',
  method: 'POST',
  doc: {
    summary: 'Create a webhook endpoint; its signing secret is shown this once',
    description:
      'Needs `webhook.*.create_endpoint`, and the rights to read what it will be sent: scoped to apis (`apiIds`), on each of them `read_key` if it takes any key.* type and `read_analytics` if any usage.* type (`api.<apiId>.read_key`, `api.<apiId>.read_analytics`); unscoped, by the types it takes (when `eventTypes` is empty, every type but usage.*, which an endpoint is sent only if it names them): `api.*.read_key` if any key.* type, `identity.*.read_identity` if any identity.* type, `rootkey.*.manage` if any rootKey.* type, `api.*.read_analytics` if any usage.* type (403 otherwise). The endpoint goes on receiving when that root key is revoked or loses those rights: disable or delete it then. An api that does not exist is 404. The URL is refused (400) if its host resolves to a loopback, private, link-local or other non-public address, unless the operator allows private ones (`WEBHOOK_ALLOW_PRIVATE`). At most 100 endpoints (412 beyond).',
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
  input: CreateEndpointBody,
  answer: Type.Object({
    endpointId: Type.String({ description: 'The new endpoint (whep_…): pass it as `endpointId` to the other calls' }),
    secret: SecretField(),
  }),
  handle: async (body, caller, deps) => {
    const endpoint = await createEndpoint(deps, caller, body)
    return { endpointId: endpoint.id, secret: endpoint.secrets[0]!.secret }
  },
})
