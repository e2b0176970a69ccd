import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { EndpointIdField, EndpointResponse } from './wire/webhook-schemas.js'
import { endpointView } from './endpoints/endpoint-view.js'
import { getEndpoint } from './get-endpoint.js'

/** webhooks.getEndpoint: a GET; the endpoint, never a secret. */
export const getEndpointV1 = v1Route({
  operation: 'webhooks.getEndpoint',
  method: 'GET',
  doc: { summary: 'Read a webhook endpoint (never a secret)', tag: 'webhooks' },
  input: Type.Object({ endpointId: EndpointIdField() }),
  answer: EndpointResponse,
  handle: async ({ endpointId }, caller, deps) => endpointView(await getEndpoint(deps, caller, endpointId)),
})
