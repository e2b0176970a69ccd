/**
 * Every error a client can see, in one table: HTTP status and the contract's code. Thrown as `ApiError`
 * anywhere; rendered to `{error:{code,message,docs,requestId}}` by the one error handler (http/error-handler.ts).
 */
export const ERRORS = {
  BAD_REQUEST: 400,
  // 403, not 401: Unkey v1 answered a missing or wrong root key so, and clients were written against it.
  UNAUTHORIZED: 403,
  INSUFFICIENT_PERMISSIONS: 403,
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

/** What an error says beyond its code and message, for the wire formats that can say it (v2's problem body). */
export interface ApiErrorDetails {
  /** Each failed check of a 400 (v2's `errors`); derived from the message when absent. */
  fields?: FieldProblem[]
  /**
   * Why a root key was not accepted: v2 answers a missing or malformed `Authorization` header with 400 and an
   * unknown root key with 401 (v1 answers all three 403).
   */
  authentication?: 'missing' | 'malformed'
  /** The specific problem, as Unkey v2 names it (`data/key_not_found`): its error `type` ends with it. */
  problem?: string
}

export class ApiError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly headers: Record<string, string> | undefined
  readonly details: ApiErrorDetails | undefined

  constructor(code: ErrorCode, message: string, headers?: Record<string, string>, details?: ApiErrorDetails) {
    super(message)
    this.name = 'ApiError'
    this.code = code
    this.statusCode = ERRORS[code]
    this.headers = headers
    this.details = details
  }
}

export const badRequest = (message: string) => new ApiError('BAD_REQUEST', message)
export const notFound = (message: string) => new ApiError('NOT_FOUND', message)

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
