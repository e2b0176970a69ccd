import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { CREATES } from '../openapi/v2-operations.js'
import { V2IdentityMeta } from './wire/identity-schemas.v2.js'
import { V2RatelimitRequests } from '../wire/named-limit-schemas.v2.js'
import { createIdentity } from './create-identity.js'

// Unkey's createIdentity body, unlike the others, does not refuse unknown fields.
const CreateIdentityBody = Type.Object({
  externalId: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[a-zA-Z0-9_.-]+$',
    description:
      'Its id in your system (a user, an organisation): letters, digits and _ . -, unique; keys created with this `externalId` belong to it',
    examples: ['user_123'],
  }),
  meta: Type.Optional(
    V2IdentityMeta('Any JSON object (≤ 64 KiB, ≤ 100 fields), returned by verifyKey as `identity.meta`'),
  ),
  ratelimits: Type.Optional(V2RatelimitRequests('Rate limits shared by every key of the identity')),
})

/** v2's identities.createIdentity (Unkey's V2IdentitiesCreateIdentity): answers the new identity's id. */
export const createIdentityV2 = v2Route({
  operation: 'identities.createIdentity',
  doc: {
    summary: 'Create an identity (a user or organisation): keys with its externalId share its meta and limits',
    tag: 'v2 identities',
    errors: CREATES,
  },
  body: CreateIdentityBody,
  data: Type.Object({ identityId: Type.String({ description: "The new identity's id" }) }),
  handle: async ({ externalId, meta, ratelimits }, caller, deps) => {
    const identity = await createIdentity(deps, caller, { externalId, meta, ratelimits })
    return { data: { identityId: identity.id } }
  },
})
