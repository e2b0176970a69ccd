import type { DocumentedCode } from '../errors/documented-codes.js'
import type { ApiError, ApiErrorDetails, ErrorCode } from '../errors/errors.js'
import type { ErrorBody as ErrorBodyOf } from '../ui-shapes.js'

/**
 * The contract's error body, the same on every path: Fastify's, the fast route's, the proxy's, the socket's.
 * Its code is one of the error table's (errors.ts), or, on a gateway refusal, the X-Keygate-Code it is sent with:
 * a code with a page (documented-codes.ts), which its `docs` link leads to. Its shape is in ui-shapes.ts, where the
 * console reads it too.
 */
export type ErrorBody<Code extends DocumentedCode = DocumentedCode> = ErrorBodyOf<Code>

/**
 * Builds the body of an error answer; the one place its shape is written. `docsBase` is absolute (docs-base.ts):
 * the `docs` link must lead to its page wherever the answer is read.
 */
export function errorBody<Code extends DocumentedCode>(
  error: { code: Code; message: string },
  requestId: string,
  docsBase: string,
): ErrorBody<Code> {
  return { error: { code: error.code, message: error.message, docs: `${docsBase}/errors/${error.code}`, requestId } }
}

/**
 * The code v1 answers an error with: its own, but for a bound the input breaks, which Unkey's v1 answered with a code
 * of its own (meta too large 413, a limit named twice 409) where v2 answers any invalid input's 400.
 */
const V1_BOUND_CODES: Record<NonNullable<ApiErrorDetails['breaks']>, ErrorCode> = {
  'size-limit': 'PAYLOAD_TOO_LARGE',
  'unique-names': 'CONFLICT',
}

/** The code of an error as v1 answers it (V1_BOUND_CODES); its status is the error table's for that code. */
export function v1CodeOf(error: ApiError): ErrorCode {
  const bound = error.details?.breaks
  return bound ? V1_BOUND_CODES[bound] : error.code
}
