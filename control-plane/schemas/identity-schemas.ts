import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from './limits.js'

/** The wire shapes of identities.*: Unkey's v1, plus `autoApply` and `async` on a named limit (v2 has autoApply). */

/** Named rate limits one identity or key may carry. */
export const MAX_NAMED_LIMITS = 50

/** The bounds of a named limit's `limit` and `duration` (ms), on both wire formats. */
export const LIMIT = { minimum: 1, maximum: 1_000_000_000 }
export const DURATION = { minimum: 1_000, maximum: 31 * 86_400_000 }

export const RateLimitName = () =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    description: "The limit's name, 1–128 characters (any, e.g. `10/10s`): verifyKey's `ratelimits[].name` uses it",
    examples: ['tokens'],
  })

/** A rate limit stored by name on an identity (shared by all its keys) or on a key. */
export const NamedRateLimitBody = Type.Object(
  {
    name: RateLimitName(),
    limit: Type.Integer({ ...LIMIT, description: 'Units allowed per window', examples: [10] }),
    duration: Type.Integer({
      ...DURATION,
      description: 'The window, in milliseconds (fixed windows aligned to the epoch)',
      examples: [1000],
    }),
    autoApply: Type.Optional(
      Type.Boolean({ description: 'Applied to every verification, named or not (default false: only when named)' }),
    ),
    async: Type.Optional(
      Type.Boolean({
        description:
          'false (default, as Unkey counts these): exact across verifiers, one Redis call per verification; true: counted by each verifier in memory and reconciled every poll',
      }),
    ),
  },
  { additionalProperties: false },
)

export const NamedRateLimits = (description: string) =>
  Type.Array(NamedRateLimitBody, {
    maxItems: MAX_NAMED_LIMITS,
    description: `${description}; at most ${MAX_NAMED_LIMITS}, names unique`,
    examples: [[{ name: 'tokens', limit: 20_000, duration: 86_400_000 }]],
  })

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

const NamedRateLimitResponse = Type.Object({
  name: Type.String({ description: "The limit's name" }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, milliseconds' }),
  autoApply: Type.Optional(Type.Boolean({ description: 'Applied to every verification without being named' })),
  async: Type.Optional(Type.Boolean({ description: 'Counted by each verifier (true) or exactly in Redis (false)' })),
})

export const NamedRateLimitsResponse = Type.Array(NamedRateLimitResponse, {
  description: 'Its rate limits, by name',
})

export const IdentityResponse = Type.Object({
  id: Type.String({ description: "The identity's id" }),
  externalId: Type.String({ description: 'Its id in your system' }),
  meta: Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta (`{}` when none)' }),
  ratelimits: NamedRateLimitsResponse,
})
