import { Type } from 'typebox'

/**
 * The wire shapes of a named rate limit, which identities and keys both carry: Unkey's v1, plus `autoApply` and
 * `async` (v2 has autoApply).
 */

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

/** A named limit as getKey and getIdentity answer it. */
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
