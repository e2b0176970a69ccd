import { rateLimitId } from '../../shared/ratelimits/ratelimit-id.js'
import { Type, type Static } from 'typebox'
import type { NamedRateLimit } from '../../shared/identity.js'
import { DURATION, LIMIT, MAX_NAMED_LIMITS } from './named-limit-schemas.js'

/** v2's named rate limits (Unkey's `RatelimitRequest` and `RatelimitResponse`), as identities carry them. */

// Unkey's RatelimitRequest does not refuse unknown fields; Keygate's `async` is one it would ignore.
export const V2RatelimitRequest = Type.Object({
  name: Type.String({
    minLength: 3,
    maxLength: 128,
    description: "The limit's name, 3–128 characters: verifyKey's `ratelimits[].name` refers to it",
    examples: ['requests'],
  }),
  limit: Type.Integer({ ...LIMIT, description: 'Units allowed per window', examples: [100] }),
  duration: Type.Integer({ ...DURATION, description: 'The window, in milliseconds', examples: [60_000] }),
  autoApply: Type.Optional(
    Type.Boolean({ description: 'Applied to every verification without being named (default false)' }),
  ),
  async: Type.Optional(
    Type.Boolean({
      description:
        "Keygate's: counted by each verifier in memory and reconciled every poll (true), or exactly in Redis (false, the default, as Unkey counts)",
    }),
  ),
})

export const V2RatelimitRequests = (description: string) =>
  Type.Array(V2RatelimitRequest, { maxItems: MAX_NAMED_LIMITS, description: `${description}; names unique` })

export const V2RatelimitResponse = Type.Object({
  id: Type.String({ description: "The limit's id: the same for the same name on the same owner" }),
  name: Type.String({ description: "The limit's name" }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, in milliseconds' }),
  autoApply: Type.Boolean({ description: 'Applied to every verification without being named' }),
})

/** An owner's (an identity's, a key's) named limits as v2 shows them. */
export function v2Ratelimits(
  ownerId: string,
  limits: readonly NamedRateLimit[] | undefined,
): Static<typeof V2RatelimitResponse>[] {
  return (limits ?? []).map(({ name, limit, duration, autoApply }) => ({
    id: rateLimitId(ownerId, name),
    name,
    limit,
    duration,
    autoApply: autoApply ?? false,
  }))
}
