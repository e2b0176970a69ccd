import type { AskedRateLimit } from '../key-fields.js'

/** A key's rate limit as v1 takes it, with Unkey's deprecated spellings (`refillRate`, `refillInterval`, `type`). */
export interface RateLimitInput {
  limit?: number
  duration?: number
  async?: boolean
  type?: 'fast' | 'consistent'
  refillRate?: number
  refillInterval?: number
}

/**
 * A key's rate limit from a v1 request in the keys domain's terms, Unkey's deprecated spellings resolved (a limit
 * given by half is the domain's to refuse, in its turn); null clears, undefined leaves.
 */
export function rateLimitOf(input: RateLimitInput | null | undefined): AskedRateLimit | null | undefined {
  if (input === null || input === undefined) return input
  return {
    limit: input.limit ?? input.refillRate,
    duration: input.duration ?? input.refillInterval,
    async: input.async ?? (input.type === undefined ? true : input.type === 'fast'),
  }
}
