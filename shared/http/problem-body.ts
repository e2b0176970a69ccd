import type { ApiError, ErrorCode, FieldProblem } from '../errors.js'

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

/** The status v2 answers with: a root key missing or malformed is a 400, an unknown one 401 (v1: both 403). */
export function problemStatus(error: ApiError): number {
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

/** `key key_… not found` → `data/key_not_found`, for the records Unkey names. */
const NOT_FOUND_RECORDS: Record<string, string> = {
  key: 'key',
  api: 'api',
  identity: 'identity',
  permission: 'permission',
  role: 'role',
  override: 'ratelimit_override',
  namespace: 'ratelimit_namespace',
  migration: 'migration',
}

function problemOf(error: ApiError): string {
  const specific = error.details?.problem
  // Unkey files the caller's mistakes it names precisely under `user/` (`user/bad_request/…`), the rest under `unkey/`.
  if (specific !== undefined) return specific.startsWith('user/') ? specific : `unkey/${specific}`
  if (error.code === 'NOT_FOUND') {
    const record = NOT_FOUND_RECORDS[/^(?:rate-limit |ratelimit )?(\w+)/i.exec(error.message)?.[1]?.toLowerCase() ?? '']
    if (record !== undefined) return `unkey/data/${record}_not_found`
  }
  return PROBLEMS[error.code]
}

/**
 * A 400's failed checks: those the error lists, or the one its message names (`apiId: must be a string` →
 * `{location: "body.apiId", message: "must be a string"}`).
 */
function fieldsOf(error: ApiError): FieldProblem[] {
  if (error.details?.fields) return error.details.fields
  const named = /^([A-Za-z0-9_.[\]-]+): ([\s\S]+)$/.exec(error.message)
  if (!named) return [{ location: 'body', message: error.message }]
  const [, field, message] = named as unknown as [string, string, string]
  const location = field === 'body' || field.startsWith('body.') || field === 'authorization' ? field : `body.${field}`
  return [{ location: location === 'authorization' ? 'header.authorization' : location, message }]
}

/** Builds v2's error body; the one place its shape is written. */
export function problemBody(error: ApiError, requestId: string): ProblemBody {
  const status = problemStatus(error)
  return {
    meta: { requestId },
    error: {
      title: TITLES[status] ?? 'Error',
      detail: error.message,
      status,
      type: `https://unkey.com/docs/errors/${problemOf(error)}`,
      ...(status === 400 ? { errors: fieldsOf(error) } : {}),
    },
  }
}
