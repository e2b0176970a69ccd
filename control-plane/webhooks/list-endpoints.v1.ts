import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { endpointView } from './endpoints/endpoint-view.js'
import { EndpointResponse } from './wire/webhook-schemas.js'
import { listEndpoints } from './list-endpoints.js'

/** webhooks.listEndpoints: a GET; every endpoint the root key may read, never a secret. */
export const listEndpointsV1 = v1Route({
  operation: 'webhooks.listEndpoints',
  method: 'GET',
  doc: {
    summary: 'List the webhook endpoints (never a secret)',
    description:
      'Every endpoint, oldest first, for a root key with `webhook.*.read_endpoint`; a root key with `webhook.<endpointId>.read_endpoint` sees those endpoints only.',
    tag: 'webhooks',
  },
  // No parameters: one that is sent is refused rather than ignored (a `limit` would not limit anything).
  input: Type.Object({}, { additionalProperties: false }),
  answer: Type.Object({
    endpoints: Type.Array(EndpointResponse, { description: 'The endpoints, oldest first' }),
  }),
  handle: async (_query, caller, deps) => ({ endpoints: (await listEndpoints(deps, caller)).map(endpointView) }),
})
