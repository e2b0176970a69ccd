import { v2Route } from '../http/management-route.js'
import { V2Identity, V2IdentityBody, v2Identity } from './wire/identity-schemas.v2.js'
import { getIdentity } from './get-identity.js'

/** v2's identities.getIdentity: `identity` is its id or its externalId. */
export const getIdentityV2 = v2Route({
  operation: 'identities.getIdentity',
  doc: { summary: 'Read an identity by its id or externalId', tag: 'v2 identities' },
  body: V2IdentityBody,
  data: V2Identity,
  handle: async ({ identity }, caller, deps) => ({
    data: v2Identity(await getIdentity(deps, caller, { idOrExternalId: identity })),
  }),
})
