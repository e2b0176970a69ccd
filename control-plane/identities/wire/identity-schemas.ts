import { Type } from 'typebox'
import { UsageThresholdsResponse } from '../../analytics/wire/usage-threshold-schemas.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { LIMITS } from '../../input-limits.js'
import { NamedRateLimitsResponse } from '../../wire/named-limit-schemas.js'

/** The wire shapes of identities.*: Unkey's v1, plus `autoApply` and `async` on a named limit (v2 has autoApply). */

export const IdentityIdField = (description = 'The identity: the `identityId` identities.createIdentity returned') =>
  Type.String({ minLength: 1, maxLength: LIMITS.idLength, description, examples: [WIRE_EXAMPLES.identityId] })

/** An identity named by its externalId (v1's `externalId` of getIdentity and updateIdentity). */
export const ExternalIdField = (description: string) =>
  Type.String({ minLength: 1, maxLength: LIMITS.ownerIdLength, description })

/** An identity's meta, as v1 takes it. */
export const IdentityMeta = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), { description, examples: [{ plan: 'pro' }] })

/** Unkey's `environment` of v1's updateIdentity and listIdentities. */
export const EnvironmentField = () =>
  Type.String({
    maxLength: LIMITS.environmentLength,
    description: "Unkey's, for future use: every identity is in `default` (another finds none)",
  })

export const IdentityResponse = Type.Object({
  id: Type.String({ description: "The identity's id" }),
  externalId: Type.String({ description: 'Its id in your system' }),
  meta: Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta (`{}` when none)' }),
  ratelimits: NamedRateLimitsResponse,
  usageThresholds: Type.Optional(UsageThresholdsResponse('identity')),
})
