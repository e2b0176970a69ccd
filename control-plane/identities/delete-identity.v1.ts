import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { IdentityIdField } from './wire/identity-schemas.js'
import { EmptyResponse } from '../wire/fields.js'
import { deleteIdentity } from './delete-identity.js'

const DeleteIdentityBody = Type.Object(
  { identityId: IdentityIdField() },
  { additionalProperties: false, examples: [{ identityId: WIRE_EXAMPLES.identityId }] },
)

/** v1's identities.deleteIdentity: names the identity by id only. */
export const deleteIdentityV1 = v1Route({
  operation: 'identities.deleteIdentity',
  method: 'POST',
  doc: {
    summary: 'Delete an identity: its keys keep their externalId and lose its meta and limits',
    tag: 'identities',
  },
  input: DeleteIdentityBody,
  answer: EmptyResponse,
  handle: async ({ identityId }, caller, deps) => {
    await deleteIdentity(deps, caller, { identityId })
    return {}
  },
})
