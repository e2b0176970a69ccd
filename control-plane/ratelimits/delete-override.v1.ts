import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EmptyResponse } from '../wire/fields.js'
import { Identifier, NamespaceFields, namespaceRefOf, OVERRIDDEN } from './wire/ratelimit-schemas.js'
import { deleteOverride } from './delete-override.js'

const DeleteOverrideBody = Type.Object(
  { ...NamespaceFields, identifier: Identifier(OVERRIDDEN) },
  { additionalProperties: false, examples: [{ namespaceName: WIRE_EXAMPLES.namespaceName, identifier: 'user_123' }] },
)

/** v1's ratelimits.deleteOverride: the namespace by id or by name. */
export const deleteOverrideV1 = v1Route({
  operation: 'ratelimits.deleteOverride',
  method: 'POST',
  doc: { summary: "Delete an identifier's override: calls get the limit they send again", tag: 'ratelimits' },
  input: DeleteOverrideBody,
  answer: EmptyResponse,
  handle: async ({ identifier, ...named }, caller, deps) => {
    await deleteOverride(deps, caller, { namespace: namespaceRefOf(named), identifier })
    return {}
  },
})
