import { ApiError, invalid } from '../shared/errors.js'
import type { NamedRateLimit } from '../shared/identity.js'
import { DEFAULT_LIMIT } from '../shared/key-limits.js'

/** A named limit as requested: the schema has checked each field. */
export type NamedLimitInput = NamedRateLimit

/**
 * The named limits of a request, stored as given (only the flags that are set): names must be unique (an input
 * rule: v1 answers it 409 CONFLICT, v2 400, as Unkey's do). [] stays [] (the caller decides whether that clears).
 */
export function namedLimitsOf(input: readonly NamedLimitInput[]): NamedRateLimit[] {
  const seen = new Set<string>()
  return input.map(({ name, limit, duration, autoApply, async }) => {
    if (seen.has(name)) {
      // About the request as a whole: v2, which answers it 400, locates it at the body.
      const message = `Ratelimit with name ${JSON.stringify(name)} is already defined in the request`
      throw new ApiError('CONFLICT', message, undefined, { fields: [{ location: 'body', message }], inputRule: true })
    }
    seen.add(name)
    return {
      name,
      limit,
      duration,
      ...(autoApply !== undefined ? { autoApply } : {}),
      ...(async !== undefined ? { async } : {}),
    }
  })
}

/** A key's `ratelimit` is its limit named `default` (Unkey's): a named limit may not take that name beside it. */
export function checkDefaultLimit(ratelimit: unknown, ratelimits: readonly NamedRateLimit[] | null | undefined): void {
  if (ratelimit && ratelimits?.some((limit) => limit.name === DEFAULT_LIMIT)) {
    throw invalid('ratelimits', `"${DEFAULT_LIMIT}" is the name of the key's ratelimit; give one or the other`)
  }
}
