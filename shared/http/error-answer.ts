import { ERRORS, type ApiError } from '../errors/errors.js'
import { errorBody, v1CodeOf } from './error-body.js'
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
 * paths): a `/v2/…` path answers v2's problem body with v2's status, any other v1's error body with v1's code. A
 * refusal of a root key (or of a credential unnamed) says how to authenticate (WWW-Authenticate: Bearer); a refused
 * portal session does not (no scheme asks for its cookie or code).
 * `docsBase` is asked only by the wire that links to the docs.
 */
export function errorAnswerOf(error: ApiError, path: string, requestId: string, docsBase: () => string): ErrorAnswer {
  const headers =
    error.code === 'UNAUTHORIZED' && error.details?.credential?.kind !== 'portal-session'
      ? { ...error.headers, 'www-authenticate': 'Bearer' }
      : (error.headers ?? undefined)
  if (isV2Path(path)) {
    const status = problemStatus(error)
    return { status, contentType: problemContentType(status, path), headers, body: problemBody(error, requestId) }
  }
  const code = v1CodeOf(error)
  return {
    status: ERRORS[code],
    contentType: 'application/json; charset=utf-8',
    headers,
    body: errorBody({ code, message: error.message }, requestId, docsBase()),
  }
}
