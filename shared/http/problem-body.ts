import type { ApiError, ErrorCode, RecordKind, RecordRef } from '../errors/errors.js'
import type { ProblemBody } from '../ui-shapes.js'

/**
 * Unkey v2's error body (RFC 7807 in an envelope): `{meta: {requestId}, error: {title, detail, status, type}}`, a
 * 400 adding `errors: [{location, message}]`. Every `/v2/` route answers its errors so; `/v1/` keeps v1's shape. The
 * shape is in ui-shapes.ts, where the portal's page reads it too.
 */
export type { ProblemBody }

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
 * The status v2 answers with: a refusal concealing its record 404 (v1: 403), a root key missing or malformed 400 and
 * any other refused credential 401 (v1: all 403). A bound the input breaks is its 400, as any invalid input (as
 * Unkey's v2 answers it; v1 answers it with a status of its own: error-body.ts).
 */
export function problemStatus(error: ApiError): number {
  const details = error.details
  if (details?.conceals) return 404
  if (error.code !== 'UNAUTHORIZED') return error.statusCode
  const credential = details?.credential
  return credential?.kind === 'root-key' && credential.refused !== 'unknown' ? 400 : 401
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
  422: 'Unprocessable Entity',
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
  UNPROCESSABLE: 'user/unprocessable_entity/query_execution_timeout',
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
  const record = details?.conceals?.record ?? details?.record
  const specific = details?.problem ?? (record && NOT_FOUND_PROBLEMS[record])
  // Unkey files the caller's mistakes it names precisely under `user/` (`user/bad_request/…`), the rest under `unkey/`.
  if (specific !== undefined) return specific.startsWith('user/') ? specific : `unkey/${specific}`
  return PROBLEMS[error.code]
}

/** How v2 says a record is not found: `api api_123 not found`, `override for user_123 not found`, `key not found`. */
function notFoundDetail({ record, name }: RecordRef): string {
  if (name === undefined) return `${record} not found`
  return record === 'override' ? `override for ${name} not found` : `${record} ${name} not found`
}

/**
 * v2's `detail`: a concealed record's as its absence (the caller must not tell them apart), a 404 naming its record
 * in v2's words, any other the message.
 */
function detailOf(error: ApiError): string {
  const { conceals, record, name } = error.details ?? {}
  if (conceals) return notFoundDetail(conceals)
  if (record !== undefined && name !== undefined) return notFoundDetail({ record, name })
  return error.message
}

/** Builds v2's error body; the one place its shape is written. */
export function problemBody(error: ApiError, requestId: string): ProblemBody {
  const status = problemStatus(error)
  return {
    meta: { requestId },
    error: {
      title: TITLES[status] ?? 'Error',
      detail: detailOf(error),
      status,
      type: `https://unkey.com/docs/errors/${problemOf(error)}`,
      // Every 400 names its fields (errors.ts); one made without says the body as a whole is wrong.
      ...(status === 400 ? { errors: error.details?.fields ?? [{ location: 'body', message: error.message }] } : {}),
    },
  }
}
