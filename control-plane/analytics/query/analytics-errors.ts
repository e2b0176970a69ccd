import { ApiError, type ErrorCode } from '../../../shared/errors/errors.js'

/** The kinds of refusal an analytics query meets, as Unkey's v2 names their problem types. */
const PROBLEMS = {
  query: ['BAD_REQUEST', 'user/bad_request/invalid_analytics_query'],
  queryType: ['BAD_REQUEST', 'user/bad_request/invalid_analytics_query_type'],
  table: ['BAD_REQUEST', 'user/bad_request/invalid_analytics_table'],
  function: ['BAD_REQUEST', 'user/bad_request/invalid_analytics_function'],
  retention: ['BAD_REQUEST', 'user/bad_request/query_range_exceeds_retention'],
  timeout: ['UNPROCESSABLE', 'user/unprocessable_entity/query_execution_timeout'],
  memory: ['UNPROCESSABLE', 'user/unprocessable_entity/query_memory_limit_exceeded'],
  rows: ['UNPROCESSABLE', 'user/unprocessable_entity/query_rows_limit_exceeded'],
  quota: ['RATE_LIMITED', 'user/too_many_requests/query_quota_exceeded'],
  notConfigured: ['PRECONDITION_FAILED', 'data/analytics_not_configured'],
  unavailable: ['UNAVAILABLE', 'data/analytics_connection_failed'],
} as const satisfies Record<string, readonly [ErrorCode, string]>

export type AnalyticsProblem = keyof typeof PROBLEMS

/** An analytics refusal of `kind`, its detail said to the caller as it is (it never holds the SQL that ran). */
export function analyticsError(kind: AnalyticsProblem, detail: string, cause?: unknown): ApiError {
  const [code, problem] = PROBLEMS[kind]
  return new ApiError(code, detail, undefined, { problem }, cause === undefined ? undefined : { cause })
}
