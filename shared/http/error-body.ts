import type { DocumentedCode } from '../documented-codes.js'

/**
 * The contract's error body, the same on every path: Fastify's, the fast route's, the proxy's, the socket's.
 * Its code is one of the error table's (errors.ts), or, on a gateway refusal, the X-Keygate-Code it is sent with:
 * a code with a page (documented-codes.ts), which its `docs` link leads to.
 */
export interface ErrorBody<Code extends DocumentedCode = DocumentedCode> {
  error: { code: Code; message: string; docs: string; requestId: string }
}

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
