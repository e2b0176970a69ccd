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
  RATE_LIMITED: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const

export type ErrorCode = keyof typeof ERRORS

/** One failed check of a request, as v2's 400 lists them: where (`body.apiId`) and what is wrong. */
export interface FieldProblem {
  location: string
  message: string
}

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

/** What an error says beyond its code and message, for the wire formats that can say it (v2's problem body). */
export interface ApiErrorDetails {
  /** The failed checks it is about (v2's `errors` on a 400): each field and what is wrong with it. */
  fields?: FieldProblem[]
  /** For a 404, the kind of record not found. */
  record?: RecordKind
  /**
   * Why a root key was not accepted: v2 answers a missing or malformed `Authorization` header with 400 and an
   * unknown root key with 401 (v1 answers all three 403).
   */
  authentication?: 'missing' | 'malformed'
  /** A refusal of a session cookie (the customer portal's), not of a bearer credential: no WWW-Authenticate. */
  sessionCookie?: true
  /** The specific problem, as Unkey v2 names it (`data/identity_already_exists`): its error `type` ends with it. */
  problem?: string
  /**
   * A rule on the request's input that v1 answers with a status of its own (meta too large 413, a limit named twice
   * 409, as Unkey's v1 did) and v2 as any broken rule: 400 `invalid_input` (as Unkey's v2 does).
   */
  inputRule?: true
  /**
   * A refusal that v2 answers as if the record did not exist (404, this message), so that a root key without rights
   * on it learns nothing of it: Unkey v2's rule for the api of keys.createKey and apis.listKeys. v1 answers the 403.
   */
  hiddenAs?: { record: RecordKind; message: string }
  /**
   * What v2 says (its `detail`) where Unkey's v2 words an answer otherwise than v1, which says the message: v1's
   * `Override not found` is v2's `override for user_123 not found`.
   */
  v2Detail?: string
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
 * A broken input rule that v1 answers with `code` (413, 409) and v2 with 400 invalid_input: see
 * ApiErrorDetails.inputRule. `field` as fieldError's.
 */
export function inputRuleError(code: ErrorCode, field: string, problem: string): ApiError {
  const error = fieldError(code, field, problem)
  return new ApiError(code, error.message, undefined, { ...error.details, inputRule: true })
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
 * What a check throws, as a value: a wire adapter's own rules on its input (v2's on `credits`), handed to the
 * operation, which reports it where the contract orders it — after the root key's rights, as Unkey's handlers do.
 */
export function problemOf(check: () => void): ApiError | undefined {
  try {
    check()
    return undefined
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
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
