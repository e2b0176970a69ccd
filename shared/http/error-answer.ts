import type { ApiError } from '../errors.js'
import { errorBody } from './error-body.js'
import { isV2Path, problemBody, problemContentType, problemStatus } from './problem-body.js'

/** An error as one wire answers it: status, content type, headers and body. */
export interface ErrorAnswer {
  status: number
  contentType: string
  headers: Record<string, string> | undefined
  body: object
}

/**
 * The one place an error becomes an answer, for every path that answers one (Fastify's error handler, the fast
 * paths): a `/v2/…` path answers v2's problem body with v2's status, any other v1's error body. A refused root key
 * says how to authenticate (WWW-Authenticate); a refused portal session cookie does not (no scheme asks for one).
 * `docsBase` is asked only by the wire that links to the docs.
 */
export function errorAnswerOf(error: ApiError, path: string, requestId: string, docsBase: () => string): ErrorAnswer {
  const headers =
    error.code === 'UNAUTHORIZED' && !error.details?.sessionCookie
      ? { ...error.headers, 'www-authenticate': 'Bearer' }
      : (error.headers ?? undefined)
  if (isV2Path(path)) {
    const status = problemStatus(error)
    return { status, contentType: problemContentType(status, path), headers, body: problemBody(error, requestId) }
  }
  return {
    status: error.statusCode,
    contentType: 'application/json; charset=utf-8',
    headers,
    body: errorBody(error, requestId, docsBase()),
  }
}
