import type { ApiError, ErrorCode } from '../errors.js'

/** The contract's error body, the same on every path: Fastify's, the fast route's, the proxy's, the socket's. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; docs: string; requestId: string }
}

/** Builds the body of an error answer; the one place its shape is written. */
export function errorBody(error: ApiError, requestId: string, docsBaseUrl: string): ErrorBody {
  return { error: { code: error.code, message: error.message, docs: `${docsBaseUrl}/errors/${error.code}`, requestId } }
}
