import { invalid } from '../shared/errors.js'
import type { RateLimitConfig } from '../shared/ratelimit.js'

export interface RateLimitInput {
  limit?: number
  duration?: number
  async?: boolean
  type?: 'fast' | 'consistent'
  refillRate?: number
  refillInterval?: number
}

/** A key's rate limit from the request, Unkey's deprecated aliases resolved; null clears, undefined leaves. */
export function rateLimitOf(input: RateLimitInput | null | undefined): RateLimitConfig | null | undefined {
  if (input === null || input === undefined) return input
  const limit = input.limit ?? input.refillRate
  const duration = input.duration ?? input.refillInterval
  if (limit === undefined || duration === undefined)
    throw invalid('ratelimit', 'needs limit and duration (ms, at least 1000)')
  return { limit, duration, async: input.async ?? (input.type === undefined ? true : input.type === 'fast') }
}
