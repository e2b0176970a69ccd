import { Type, type Static } from 'typebox'
import type { IdentityRecord } from '../../shared/identity.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from '../schemas/limits.js'
import { V2ListBody } from './list-body.js'
import { V2RatelimitRequests, V2RatelimitResponse, v2Ratelimits } from './named-limit-schemas.js'

/** The wire shapes of v2's identities.* (Unkey's V2Identities* and `Identity`). */

const Meta = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100, description, examples: [{ plan: 'pro' }] })

/** v2 names an identity by one string: its id or its externalId. */
const IdentityName = () =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.ownerIdLength,
    description: 'The identity: its id (`id_…`) or its externalId',
    examples: [WIRE_EXAMPLES.identityId],
  })

// Unkey's createIdentity body, unlike the others, does not refuse unknown fields.
export const V2CreateIdentityBody = Type.Object({
  externalId: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[a-zA-Z0-9_.-]+$',
    description:
      'Its id in your system (a user, an organisation): letters, digits and _ . -, unique; keys created with this `externalId` belong to it',
    examples: ['user_123'],
  }),
  meta: Type.Optional(Meta('Any JSON object (≤ 64 KiB, ≤ 100 fields), returned by verifyKey as `identity.meta`')),
  ratelimits: Type.Optional(V2RatelimitRequests('Rate limits shared by every key of the identity')),
})

export const V2IdentityBody = Type.Object({ identity: IdentityName() }, { additionalProperties: false })

export const V2UpdateIdentityBody = Type.Object(
  {
    identity: IdentityName(),
    meta: Type.Optional(Meta('Replaces its meta (`{}` clears it; left out, kept)')),
    ratelimits: Type.Optional(V2RatelimitRequests('Replaces its rate limits (`[]` removes them; left out, kept)')),
  },
  { additionalProperties: false },
)

export const V2ListIdentitiesBody = V2ListBody('identities', 'id or externalId')

export const V2Identity = Type.Object({
  id: Type.String({ description: "The identity's id" }),
  externalId: Type.String({ description: 'Its id in your system' }),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta (`{}` when none)' })),
  ratelimits: Type.Optional(Type.Array(V2RatelimitResponse, { description: 'Its rate limits (`[]` when none)' })),
})

/** An identity as v2 shows it: meta `{}` and ratelimits `[]` when it has none (never null). */
export function v2Identity(identity: IdentityRecord): Static<typeof V2Identity> {
  return {
    id: identity.id,
    externalId: identity.externalId,
    meta: identity.meta ?? {},
    ratelimits: v2Ratelimits(identity.id, identity.ratelimits),
  }
}
