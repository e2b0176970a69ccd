import type { ApiError } from '../../shared/errors/errors.js'
import { analyticsError } from './query/analytics-errors.js'
import { engineErrorOf } from './query/engine-errors.js'

/**
 * The caller's error for what the engine answered one of Keygate's own reads with (a usage report, lastUsedAt): a limit
 * it ran into is the caller's to narrow (422, or 429), as for a query of theirs; anything else is not a mistake of the
 * caller's (they wrote no SQL) but the engine failing, a 503. Never the engine's message: it quotes the statement.
 */
export function reportErrorOf(err: unknown): ApiError {
  const asQuery = engineErrorOf(err)
  if (asQuery.code !== 'BAD_REQUEST') return asQuery
  return analyticsError('unavailable', 'The analytics engine could not answer: try again later', err)
}
