import { ApiError } from '../shared/errors.js'
import type { NamedRateLimit } from '../shared/identity.js'

/** A named limit as requested: the schema has checked each field. */
export type NamedLimitInput = NamedRateLimit

/**
 * The named limits of a request, stored as given (only the flags that are set): names must be unique, a 409
 * CONFLICT as Unkey answers it. [] stays [] (the caller decides whether that clears).
 */
export function namedLimitsOf(input: readonly NamedLimitInput[]): NamedRateLimit[] {
  const seen = new Set<string>()
  return input.map(({ name, limit, duration, autoApply, async }) => {
    if (seen.has(name)) {
      throw new ApiError('CONFLICT', `Ratelimit with name ${JSON.stringify(name)} is already defined in the request`)
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
