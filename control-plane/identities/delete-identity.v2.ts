import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { V2IdentityBody } from './wire/identity-schemas.v2.js'
import { deleteIdentity } from './delete-identity.js'

/**
 * v2's identities.deleteIdentity: `identity` is its id or its externalId. Its errors are answered as
 * application/problem+json, the one type Unkey's SDK reads them as (shared/http/problem-body.ts).
 */
export const deleteIdentityV2 = v2Route({
  operation: 'identities.deleteIdentity',
  doc: {
    summary: 'Delete an identity: its keys keep their externalId and lose its meta and limits',
    tag: 'v2 identities',
  },
  body: V2IdentityBody,
  data: Type.Object({}, { description: 'Nothing: the identity is gone' }),
  handle: async ({ identity }, caller, deps) => {
    await deleteIdentity(deps, caller, { idOrExternalId: identity })
    return { data: {} }
  },
})
