import type { FieldProblem } from '../ui-shapes.js'

/**
 * Every error a client can see, in one table: HTTP status and the contract's code. Thrown as `ApiError`
 * anywhere; rendered to `{error:{code,message,docs,requestId}}` by the one error handler (http/error-handler.ts).
 */
export const ERRORS = {
  BAD_REQUEST: 400,
  // 403, not 401: Unkey v1 answered a missing or wrong root key so, and clients were written against it.
  UNAUTHORIZED: 403,
  INSUFFICIENT_PERMISSIONS: 403,
  // Keygate's own: a signed request (GitHub's leak reports) whose signature does not hold. No root key would help.
  INVALID_SIGNATURE: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  REQUEST_TIMEOUT: 408,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // An analytics query that ran into a limit (time, memory, rows, the answer's size).
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const

export type ErrorCode = keyof typeof ERRORS

export type { FieldProblem } from '../ui-shapes.js'

/** The records a request names by id or name: a 404 says which kind was not found (v2's `data/key_not_found`). */
export type RecordKind =
  | 'key'
  | 'api'
  | 'identity'
  | 'permission'
  | 'role'
  | 'namespace'
  | 'override'
  | 'rootKey'
  | 'webhookEndpoint'
  | 'webhookEvent'
  | 'portal'

/** A record as a request names it: its kind, and the id, name or identifier it was named by (none: a key itself). */
export interface RecordRef {
  record: RecordKind
  name?: string
}

/**
 * A credential refused: whose it is (a root key, sent as a bearer token; or a portal session's cookie or one-time
 * code) and why: none was sent, what was sent is not in the credential's form, or it is not known (or no longer
 * valid).
 */
export interface RefusedCredential {
  kind: 'root-key' | 'portal-session'
  refused: 'missing' | 'malformed' | 'unknown'
}

/**
 * What an error states beyond its code and message, in the domain's terms; the renderer (shared/http/error-answer.ts)
 * decides from them how each wire format answers it.
 */
export interface ApiErrorDetails {
  /** The failed checks it is about (v2's `errors` on a 400): each field and what is wrong with it. */
  fields?: FieldProblem[]
  /** For a 404, the kind of record not found. */
  record?: RecordKind
  /** For a 404, what the request named the record by (its name, or the identifier an override is for). */
  name?: string
  /** For a refused credential (UNAUTHORIZED), which one and why. */
  credential?: RefusedCredential
  /** The specific problem, as Unkey v2 names it (`data/identity_already_exists`): its error `type` ends with it. */
  problem?: string
  /**
   * For a 400, the bound on the request's content it breaks, where that is more than any invalid input: a value over
   * its `size-limit` (meta), or a name repeated where names must be `unique-names` (a request's named rate limits).
   */
  breaks?: 'size-limit' | 'unique-names'
  /**
   * The record the caller may not learn exists: the error refuses an act on it (403), or says it is absent (404),
   * and either must read as the other would. Unkey v2's rule for the api of keys.createKey and apis.listKeys.
   */
  conceals?: RecordRef
  /**
   * The domain rule the input broke (`refill-needs-credits`), for a wire whose contract words that rule otherwise
   * than the message does: a route's `wording` (control-plane/http/management-route.ts) says it in its terms.
   */
  rule?: string
}

export class ApiError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly headers: Record<string, string> | undefined
  readonly details: ApiErrorDetails | undefined

  /** `options.cause`: the failure behind it, logged (never answered) with it. */
  constructor(
    code: ErrorCode,
    message: string,
    headers?: Record<string, string>,
    details?: ApiErrorDetails,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'ApiError'
    this.code = code
    this.statusCode = ERRORS[code]
    this.headers = headers
    this.details = details
  }
}

/** Where a field of the request body is, as v2 locates it: `body.<path>` (`body.keys.3.hash`), or `body` itself. */
const bodyLocation = (field: string): string => (field === 'body' ? 'body' : `body.${field}`)

/**
 * An error about one field of the request body (`keys.3.hash`, `body` for the body as a whole): the message reads
 * `<field>: <problem>`, and the field is located for v2 (`body.keys.3.hash`).
 */
export function fieldError(code: ErrorCode, field: string, problem: string): ApiError {
  return new ApiError(code, `${field}: ${problem}`, undefined, {
    fields: [{ location: bodyLocation(field), message: problem }],
  })
}

/**
 * A 400 about one field of the request body that breaks a bound on its content (ApiErrorDetails.breaks): `field` and
 * `problem` as fieldError's.
 */
export function boundError(bound: NonNullable<ApiErrorDetails['breaks']>, field: string, problem: string): ApiError {
  const error = fieldError('BAD_REQUEST', field, problem)
  return new ApiError(error.code, error.message, undefined, { ...error.details, breaks: bound })
}

/** A 400 about one field of the request body: `invalid('expires', 'must be in the future')`. */
export const invalid = (field: string, problem: string): ApiError => fieldError('BAD_REQUEST', field, problem)

/** A 400 about the request as a whole (no one field is wrong): v2 locates it at `body`. */
export const badRequest = (message: string): ApiError =>
  new ApiError('BAD_REQUEST', message, undefined, { fields: [{ location: 'body', message }] })

/** A 404 for a record of `record`'s kind that does not exist (or that the caller may not learn exists). */
export const notFound = (record: RecordKind, message: string): ApiError =>
  new ApiError('NOT_FOUND', message, undefined, { record })

/**
 * Runs `check`, a refusal about `record`: an ApiError it throws is thrown again as concealing the record
 * (ApiErrorDetails.conceals), so that it reads as the record's absence would where the wire hides which.
 */
export function concealing(record: RecordRef, check: () => void): void {
  try {
    check()
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    throw new ApiError(err.code, err.message, err.headers, { ...err.details, conceals: record })
  }
}

/** A store that cannot be reached: the write was not applied (scripts are atomic), retry later. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}

/** A compare-and-set write lost against a concurrent write of the same record. */
export class WriteConflictError extends Error {
  constructor(message = 'the record changed during the write') {
    super(message)
    this.name = 'WriteConflictError'
  }
}
