import type { ApiError, ErrorCode, FieldProblem, RecordKind } from '../errors.js'

/**
 * Unkey v2's error body (RFC 7807 in an envelope): `{meta: {requestId}, error: {title, detail, status, type}}`, a
 * 400 adding `errors: [{location, message}]`. Every `/v2/` route answers its errors so; `/v1/` keeps v1's shape.
 */
export interface ProblemBody {
  meta: { requestId: string }
  error: { title: string; detail: string; status: number; type: string; errors?: FieldProblem[] }
}

/** Whether a request is one of v2's: its errors are problem bodies. */
export function isV2Path(url: string): boolean {
  return url.startsWith('/v2/')
}

/**
 * Operations whose every error Unkey's document (and so its SDK) types as `application/problem+json`: its SDK turns
 * those errors into typed ones only under that type (Unkey's own server answers them `application/json`, so its SDK
 * sees generic errors there; Keygate answers what the SDK reads).
 */
const PROBLEM_JSON_OPERATIONS = new Set(['/v2/identities.deleteIdentity'])

/**
 * Unkey's SDK (2.x) parses every error but 429 only as `application/json`, and 429 only as problem+json: any
 * other type turns its typed error into a generic one. `path`: the operation's, for the few typed otherwise.
 */
export function problemContentType(status: number, path?: string): string {
  return status === 429 || (path !== undefined && PROBLEM_JSON_OPERATIONS.has(path))
    ? 'application/problem+json'
    : 'application/json; charset=utf-8'
}

/**
 * The status v2 answers with: a broken input rule 400 (v1: its own status), a refusal hiding its record 404 (v1:
 * 403), a root key missing or malformed 400 and an unknown one 401 (v1: all 403).
 */
export function problemStatus(error: ApiError): number {
  if (error.details?.inputRule) return 400
  if (error.details?.hiddenAs) return 404
  if (error.code !== 'UNAUTHORIZED') return error.statusCode
  return error.details?.authentication ? 400 : 401
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  // Unkey's title for its one kind of 403: a root key without the permission.
  403: 'Insufficient Permissions',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

/**
 * The problem type of each code, as Unkey's error documentation names it (`https://unkey.com/docs/errors/…`), so
 * that a client matching on `type` keeps working; a specific one (`data/key_not_found`) comes with the error.
 */
const PROBLEMS: Record<ErrorCode, string> = {
  BAD_REQUEST: 'unkey/application/invalid_input',
  UNAUTHORIZED: 'unkey/authentication/key_not_found',
  INSUFFICIENT_PERMISSIONS: 'unkey/authorization/insufficient_permissions',
  INVALID_SIGNATURE: 'keygate/authentication/invalid_signature',
  NOT_FOUND: 'unkey/data/not_found',
  METHOD_NOT_ALLOWED: 'user/bad_request/method_not_allowed',
  CONFLICT: 'unkey/data/conflict',
  REQUEST_TIMEOUT: 'user/bad_request/request_timeout',
  PRECONDITION_FAILED: 'unkey/application/precondition_failed',
  PAYLOAD_TOO_LARGE: 'user/bad_request/request_body_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'user/bad_request/request_body_unreadable',
  RATE_LIMITED: 'user/too_many_requests/workspace_rate_limited',
  REQUEST_HEADER_FIELDS_TOO_LARGE: 'user/bad_request/request_headers_too_large',
  INTERNAL_SERVER_ERROR: 'unkey/application/unexpected_error',
  BAD_GATEWAY: 'unkey/application/service_unavailable',
  UNAVAILABLE: 'unkey/application/service_unavailable',
  GATEWAY_TIMEOUT: 'unkey/application/service_unavailable',
}

/** The problem of each kind of record not found, as Unkey names it. */
const NOT_FOUND_PROBLEMS: Record<RecordKind, string> = {
  key: 'data/key_not_found',
  api: 'data/api_not_found',
  identity: 'data/identity_not_found',
  permission: 'data/permission_not_found',
  role: 'data/role_not_found',
  namespace: 'data/ratelimit_namespace_not_found',
  override: 'data/ratelimit_override_not_found',
  // Unkey's v2 has no root-key or webhook operations, so no problem of its own for one not found.
  rootKey: 'data/not_found',
  webhookEndpoint: 'data/not_found',
  webhookEvent: 'data/not_found',
  portal: 'data/portal_not_found',
}

function problemOf(error: ApiError): string {
  const details = error.details
  const record = details?.hiddenAs?.record ?? details?.record
  const specific = details?.problem ?? (record && NOT_FOUND_PROBLEMS[record])
  // Unkey files the caller's mistakes it names precisely under `user/` (`user/bad_request/…`), the rest under `unkey/`.
  if (specific !== undefined) return specific.startsWith('user/') ? specific : `unkey/${specific}`
  return PROBLEMS[details?.inputRule ? 'BAD_REQUEST' : error.code]
}

/** Builds v2's error body; the one place its shape is written. */
export function problemBody(error: ApiError, requestId: string): ProblemBody {
  const status = problemStatus(error)
  return {
    meta: { requestId },
    error: {
      title: TITLES[status] ?? 'Error',
      detail: error.details?.hiddenAs?.message ?? error.details?.v2Detail ?? error.message,
      status,
      type: `https://unkey.com/docs/errors/${problemOf(error)}`,
      // Every 400 names its fields (errors.ts); one made without says the body as a whole is wrong.
      ...(status === 400 ? { errors: error.details?.fields ?? [{ location: 'body', message: error.message }] } : {}),
    },
  }
}
