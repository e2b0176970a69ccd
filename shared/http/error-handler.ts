import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from './keygate-server.js'
import { docsBaseFor, docsBaseForSocket } from './docs-base.js'
import { errorBody } from './error-body.js'
import { errorAnswerOf } from './error-answer.js'
import { nodeHttp } from './node-http.js'
import { newRequestId } from './request-id.js'
import { closestName } from '../closest-name.js'
import { clipInput } from '../clip-input.js'
import {
  ApiError,
  badRequest,
  ERRORS,
  fieldError,
  invalid,
  StoreUnavailableError,
  WriteConflictError,
  type ErrorCode,
} from '../errors/errors.js'
import { unavailableMessage } from './unavailable-log.js'

// UNAUTHORIZED shares 403 with INSUFFICIENT_PERMISSIONS: only root-key auth answers it (with WWW-Authenticate),
// so another 403 is never taken for it.
const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(ERRORS)
    .filter(([code]) => code !== 'UNAUTHORIZED')
    .map(([code, status]) => [status, code as ErrorCode]),
)

// Fastify's own messages may quote the request, however long: what a message made of one says is bounded.
const FASTIFY_MESSAGE_MAX = 200

/** Any thrown value → the contract's error. Messages of anything ≥ 500 are never shown to clients. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof StoreUnavailableError)
    return new ApiError('UNAVAILABLE', 'the store cannot be reached; retry later')
  if (err instanceof WriteConflictError)
    return new ApiError('CONFLICT', 'the record was changed by another request; retry')
  const fastifyError = err as Partial<FastifyError>
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fieldError('PAYLOAD_TOO_LARGE', 'body', 'is larger than the limit')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'content-type: must be application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('body', 'is empty; send a JSON object')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // The parser also refuses `__proto__` and `constructor.prototype` keys here (prototype poisoning).
      return invalid('body', 'is not valid JSON, or has a __proto__ or constructor.prototype key')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH': {
      // Fastify quotes the whole URL: a path parameter past maxParamLength, or one badly percent-encoded.
      const url = /^'([\s\S]*)' is /.exec(fastifyError.message ?? '')?.[1] ?? ''
      return badRequest(`'${clipInput(url)}': a path segment is too long or badly encoded`)
    }
  }
  const status = fastifyError.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODE_BY_STATUS.get(status) ?? 'BAD_REQUEST'
    // Parser errors (invalid JSON, __proto__ keys) arrive as SyntaxErrors with a 400.
    if (err instanceof SyntaxError) {
      const problem = `is not valid JSON (${err.message})`
      return fieldError(code, 'body', clipInput(problem, FASTIFY_MESSAGE_MAX - 'body: '.length))
    }
    const message = clipInput(fastifyError.message ?? 'bad request', FASTIFY_MESSAGE_MAX)
    return new ApiError(code, message, undefined, { fields: [{ location: 'body', message }] })
  }
  return new ApiError('INTERNAL_SERVER_ERROR', 'internal error; the request id identifies it in our logs')
}

export function renderError(error: ApiError, request: FastifyRequest, reply: FastifyReply, docsBaseUrl: string) {
  const path = request.url.split('?', 1)[0]!
  const answer = errorAnswerOf(error, path, request.id, () => docsBaseFor(docsBaseUrl, request.raw))
  reply.header('x-request-id', request.id)
  if (answer.headers) reply.headers(answer.headers)
  return reply.code(answer.status).type(answer.contentType).send(answer.body)
}

/** Says why a request matched no route: 405 (with Allow) on a known path, 404 otherwise. */
export type UnmatchedRoute = (request: FastifyRequest) => ApiError

/**
 * The one error handler and the 404/405 handler of every Keygate server. `unmatchedOperation` is said of a
 * `/v1/…` or `/v2/…` path this server does not serve (a verifier: management operations are the control plane's).
 */
export function installErrorHandling(
  app: KeygateServer,
  docsBaseUrl: string,
  unmatchedOperation?: string,
): UnmatchedRoute {
  const methodsByPath = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByPath.set(route.url, methods)
  })

  app.setErrorHandler((err, request, reply) => {
    const error = toApiError(err)
    // Without per-request child loggers (the verifier's hot path) the request id is added here.
    const context = request.log === app.log ? { err, requestId: request.id } : { err }
    if (error.code === 'UNAVAILABLE') request.log.warn(context, unavailableMessage(err, error))
    else if (error.statusCode >= 500) request.log.error(context, 'request failed')
    return renderError(error, request, reply, docsBaseUrl)
  })

  const unmatched: UnmatchedRoute = (request) => {
    const path = request.url.split('?', 1)[0] ?? ''
    const allowed = methodsByPath.get(path)
    return allowed
      ? new ApiError('METHOD_NOT_ALLOWED', `${clipInput(path)} does not answer ${request.method}`, {
          allow: [...allowed].join(', '),
        })
      : new ApiError(
          'NOT_FOUND',
          `no operation at ${request.method} ${clipInput(path)}${suggestion(path, methodsByPath.keys())}${
            unmatchedOperation && /^\/v\d+\/[A-Za-z]/.test(path) ? `: ${unmatchedOperation}` : ''
          }`,
        )
  }
  app.setNotFoundHandler((request, reply) => renderError(unmatched(request), request, reply, docsBaseUrl))
  return unmatched
}

/**
 * `; did you mean keys.createKey?` for a path that is nearly an operation of its version: a typo or another case
 * (`/v1/keys.createkey`), the method under the wrong service (`/v1/apis.createKey`), or no `/v1/` (then the
 * whole v1 path is suggested). Nothing when no operation is close: a guess would mislead.
 */
function suggestion(path: string, paths: Iterable<string>): string {
  const version = /^\/(v\d+)\//.exec(path)?.[1]
  const operations = new Map<string, string>()
  for (const known of paths) {
    const [, knownVersion, operation] = /^\/(v\d+)\/([A-Za-z]+\.[A-Za-z]+|[A-Za-z]+)$/.exec(known) ?? []
    if (operation && knownVersion === (version ?? 'v1')) operations.set(operation, known)
  }
  const asked = version ? path.slice(version.length + 2) : path.slice(path.lastIndexOf('/') + 1)
  const method = asked.slice(asked.lastIndexOf('.') + 1).toLowerCase()
  const nearest =
    closestName(asked, operations.keys()) ??
    [...operations.keys()].find((op) => method.length > 3 && op.slice(op.lastIndexOf('.') + 1).toLowerCase() === method)
  if (nearest === undefined) return ''
  return `; did you mean ${version ? nearest : operations.get(nearest)}?`
}

/**
 * Requests Node's HTTP parser rejects (malformed, headers too large, too slow) never reach Fastify: answer
 * them on the socket in the contract's shape, with a request id, then close.
 */
export function clientErrorHandler(docsBaseUrl: string) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return
    const error =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('REQUEST_TIMEOUT', 'the request took too long to arrive')
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? new ApiError('REQUEST_HEADER_FIELDS_TOO_LARGE', 'the request headers are larger than the limit')
          : badRequest('the request is not well-formed HTTP')
    const requestId = newRequestId()
    const body = JSON.stringify(errorBody(error, requestId, docsBaseForSocket(docsBaseUrl, socket)))
    socket.end(
      `HTTP/1.1 ${error.statusCode} ${nodeHttp.STATUS_CODES[error.statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
}
