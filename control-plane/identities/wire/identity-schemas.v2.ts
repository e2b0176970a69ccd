import { Type, type Static } from 'typebox'
import type { IdentityRecord } from '../../../shared/identity.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { LIMITS } from '../../input-limits.js'
import { V2RatelimitResponse, v2Ratelimits } from '../../wire/named-limit-schemas.v2.js'
import { UsageThresholdsResponse } from '../../analytics/wire/usage-threshold-schemas.js'

/** The wire shapes v2's identities.* share (Unkey's V2Identities* and `Identity`). */

/** An identity's meta, as v2 takes it. */
export const V2IdentityMeta = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100, description, examples: [{ plan: 'pro' }] })

/** v2 names an identity by one string: its id or its externalId. */
export const V2IdentityField = () =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.ownerIdLength,
    description: 'The identity: its id (`id_…`) or its externalId',
    examples: [WIRE_EXAMPLES.identityId],
  })

export const V2IdentityBody = Type.Object({ identity: V2IdentityField() }, { additionalProperties: false })

export const V2Identity = Type.Object({
  id: Type.String({ description: "The identity's id" }),
  externalId: Type.String({ description: 'Its id in your system' }),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta (`{}` when none)' })),
  ratelimits: Type.Optional(Type.Array(V2RatelimitResponse, { description: 'Its rate limits (`[]` when none)' })),
  usageThresholds: Type.Optional(UsageThresholdsResponse('identity')),
})

/** An identity as v2 shows it: meta `{}` and ratelimits `[]` when it has none (never null). */
export function v2Identity(identity: IdentityRecord): Static<typeof V2Identity> {
  return {
    id: identity.id,
    externalId: identity.externalId,
    meta: identity.meta ?? {},
    ratelimits: v2Ratelimits(identity.id, identity.ratelimits),
    ...(identity.usageThresholds ? { usageThresholds: identity.usageThresholds } : {}),
  }
}
