import type { ApiError } from '../../../shared/errors/errors.js'
import { analyticsError, type AnalyticsProblem } from './analytics-errors.js'

const TIMED_OUT = 'Query execution time limit exceeded. Try simplifying your query or reducing the time range.'
const TOO_MANY_ROWS = 'Query result exceeds the maximum row count.'
const TOO_LARGE = 'Query result exceeds the maximum response size.'

/** ClickHouse's exception codes for the limits a query runs into, and what each is to the caller. */
const LIMIT_CODES: Readonly<Record<number, readonly [AnalyticsProblem, string]>> = {
  158: ['rows', TOO_MANY_ROWS],
  159: ['timeout', TIMED_OUT],
  198: ['rows', 'Query attempted to read too many rows. Try adding more filters or reducing the time range.'],
  201: ['quota', 'Query quota exceeded for the current time window. Please try again later.'],
  241: ['memory', 'Query memory limit exceeded. Try simplifying your query or reducing the result set size.'],
  394: ['timeout', 'Query was cancelled due to resource limits.'],
  396: ['rows', TOO_MANY_ROWS],
}

/** What the caller is told of a mistake the engine found, without the statement that ran (it holds the scoping). */
const MISTAKES: readonly [RegExp, string][] = [
  [/substitution .* is not set|query parameter/i, 'Query parameters are not supported'],
  [/unknown function|no matching signature/i, 'Unknown function in analytics query'],
  [
    /unknown identifier|unknown expression|unknown column|missing columns|there is no column|no such column|cannot find column/i,
    'Unknown identifier in analytics query',
  ],
  [/syntax error|unexpected token|unrecognized token|cannot parse/i, 'Invalid SQL syntax'],
  [/illegal type|type mismatch|no supertype|cannot convert/i, 'Type mismatch in analytics query'],
]

/**
 * The caller's error for what the engine answered a query with: a limit it ran into (422, or 429 for a quota), else a
 * mistake in the query (400) in a few words of its own. Never the engine's message itself: it quotes the statement that
 * ran, scoping included.
 */
export function engineErrorOf(err: unknown): ApiError {
  const message = String(err)
  const code = Number(/Code: (\d+)/.exec(message)?.[1])
  // A result too large in bytes is a memory limit to the caller, as a result with too many rows is a row limit.
  if (code === 396 && /bytes/i.test(message)) return analyticsError('memory', TOO_LARGE, err)
  const limit = LIMIT_CODES[code]
  if (limit !== undefined) return analyticsError(limit[0], limit[1], err)
  const mistake = MISTAKES.find(([pattern]) => pattern.test(message))?.[1] ?? 'Invalid analytics query'
  return analyticsError('query', mistake, err)
}

export { TIMED_OUT, TOO_LARGE }
