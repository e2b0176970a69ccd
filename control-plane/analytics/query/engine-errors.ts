import type { ApiError } from '../../../shared/errors/errors.js'
import { analyticsError, type AnalyticsProblem } from './analytics-errors.js'

const TIMED_OUT = 'Query execution time limit exceeded. Try simplifying your query or reducing the time range.'
const TOO_MANY_ROWS = 'Query result exceeds the maximum row count.'
const TOO_LARGE = 'Query result exceeds the maximum response size.'
const UNAVAILABLE = 'The analytics engine cannot be reached. Please try again later.'

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

/**
 * ClickHouse's exception codes that say the engine failed, not the query: a server Keygate may not use as configured
 * (its user, password, grants or database), one too busy, or a cluster's coordination (Keeper) or replicas failing.
 * The same query may succeed later.
 */
const FAILURE_CODES: ReadonlySet<number> = new Set([
  // UNKNOWN_TABLE: a table of Keygate's that the engine lacks (dropped, or on a replica that has not made it): every
  // table a caller's query reads is one of them, checked before it runs (checked-query.ts), as are Keygate's own reads.
  60,
  81, // UNKNOWN_DATABASE: CLICKHOUSE_URL's database
  192, // UNKNOWN_USER
  193, // WRONG_PASSWORD
  194, // REQUIRED_PASSWORD
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  225, // NO_ZOOKEEPER
  242, // TABLE_IS_READ_ONLY: a replica that lost Keeper
  252, // TOO_MANY_PARTS
  279, // ALL_CONNECTION_TRIES_FAILED
  319, // UNKNOWN_STATUS_OF_INSERT
  497, // ACCESS_DENIED: Keygate's user lacks a grant (a caller's query is held to SELECTs of the tables first)
  516, // AUTHENTICATION_FAILED
  999, // KEEPER_EXCEPTION
])

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
 * ClickHouse's exception code in an engine's error: chDB's (`clickhouseCode`), the server client's (`code`, its
 * digits), or the `Code: N.` its message starts with. None when ClickHouse did not answer: the server could not be
 * reached or did not answer in time, or the engine was closed.
 */
export function exceptionCodeOf(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null) {
    const { clickhouseCode, code } = err as { clickhouseCode?: unknown; code?: unknown }
    if (typeof clickhouseCode === 'number') return clickhouseCode
    if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code)
  }
  const said = /Code: (\d+)\./.exec(String(err))?.[1]
  return said === undefined ? undefined : Number(said)
}

/** Whether an engine's error is its own failure (no answer, or an answer that says so), not the query's. */
export function isEngineFailure(err: unknown): boolean {
  const code = exceptionCodeOf(err)
  if (code === undefined || FAILURE_CODES.has(code)) return true
  // The memory of the server or of Keygate's user, spent by every query at once (`(total) memory limit exceeded`, or
  // `Memory limit (total) exceeded` before 26), not this query's own limit (`Query memory limit`): a query within its
  // own limit may meet it, and succeed later.
  return code === MEMORY_LIMIT_EXCEEDED && /\((?:total|for user)\)/i.test(String(err))
}

const MEMORY_LIMIT_EXCEEDED = 241

/**
 * The caller's error for what the engine answered a query with: the engine's own failure (503: the query may succeed
 * later), a limit it ran into (422, or 429 for a quota), else a mistake in the query (400) in a few words of its own.
 * Never the engine's message itself: it quotes the statement that ran, scoping included.
 */
export function engineErrorOf(err: unknown): ApiError {
  if (isEngineFailure(err)) return analyticsError('unavailable', UNAVAILABLE, err)
  const message = String(err)
  const code = exceptionCodeOf(err)
  // A result too large in bytes is a memory limit to the caller, as a result with too many rows is a row limit (the
  // exception's name, TOO_MANY_ROWS_OR_BYTES, says both: its message says which).
  if (code === 396 && /max bytes/i.test(message)) return analyticsError('memory', TOO_LARGE, err)
  const limit = code === undefined ? undefined : LIMIT_CODES[code]
  if (limit !== undefined) return analyticsError(limit[0], limit[1], err)
  const mistake = MISTAKES.find(([pattern]) => pattern.test(message))?.[1] ?? 'Invalid analytics query'
  return analyticsError('query', mistake, err)
}

export { TIMED_OUT, TOO_LARGE }
