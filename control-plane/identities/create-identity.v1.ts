import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { LIMITS } from '../input-limits.js'
import { IdentityMeta } from './wire/identity-schemas.js'
import { NamedRateLimits } from '../wire/named-limit-schemas.js'
import { createIdentity } from './create-identity.js'

const CreateIdentityBody = Type.Object(
  {
    externalId: Type.String({
      minLength: 3,
      maxLength: LIMITS.ownerIdLength,
      description:
        'Its id in your system (a user, an organisation), 3–256 characters, unique: keys created with this `externalId` belong to it',
      examples: ['user_123'],
    }),
    meta: Type.Optional(IdentityMeta('Any JSON object (≤ 64 KiB), returned by verifyKey as `identity.meta`')),
    ratelimits: Type.Optional(NamedRateLimits('Rate limits shared by every key of the identity')),
  },
  {
    additionalProperties: false,
    examples: [{ externalId: 'user_123', ratelimits: [{ name: 'requests', limit: 100, duration: 60_000 }] }],
  },
)

/** v1's identities.createIdentity: answers the new identity's id. */
export const createIdentityV1 = v1Route({
  operation: 'identities.createIdentity',
  method: 'POST',
  doc: {
    summary: 'Create an identity (a user or organisation): keys with its externalId share its meta and limits',
    tag: 'identities',
  },
  input: CreateIdentityBody,
  answer: Type.Object({ identityId: Type.String({ description: 'The new identity’s id' }) }),
  handle: async (body, caller, deps) => ({ identityId: (await createIdentity(deps, caller, body)).id }),
})
