import type { ErrorCode } from '../errors.js'

/**
 * The contract's error body, the same on every path: Fastify's, the fast route's, the proxy's, the socket's.
 * Its code is one of the error table's (errors.ts), or, on a gateway refusal, the X-Keygate-Code it is sent with.
 */
export interface ErrorBody<Code extends string = ErrorCode> {
  error: { code: Code; message: string; docs: string; requestId: string }
}

/** Builds the body of an error answer; the one place its shape is written. */
export function errorBody<Code extends string = ErrorCode>(
  error: { code: Code; message: string },
  requestId: string,
  docsBaseUrl: string,
): ErrorBody<Code> {
  return { error: { code: error.code, message: error.message, docs: `${docsBaseUrl}/errors/${error.code}`, requestId } }
}
