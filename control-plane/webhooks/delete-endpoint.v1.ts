import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EmptyResponse } from '../wire/fields.js'
import { EndpointIdField } from './wire/webhook-schemas.js'
import { deleteEndpoint } from './delete-endpoint.js'

const DeleteEndpointBody = Type.Object(
  { endpointId: EndpointIdField('The endpoint to delete, with its delivery log') },
  { additionalProperties: false, examples: [{ endpointId: WIRE_EXAMPLES.webhookEndpointId }] },
)

/** webhooks.deleteEndpoint: Keygate's own, in v1 style. */
export const deleteEndpointV1 = v1Route({
  operation: 'webhooks.deleteEndpoint',
  method: 'POST',
  doc: { summary: 'Delete a webhook endpoint: nothing more is sent to it', tag: 'webhooks' },
  input: DeleteEndpointBody,
  answer: EmptyResponse,
  handle: async ({ endpointId }, caller, deps) => {
    await deleteEndpoint(deps, caller, endpointId)
    return {}
  },
})
