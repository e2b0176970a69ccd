import type { IncomingMessage, ServerResponse } from 'node:http'
import { docsBaseFor } from './docs-base.js'
import { errorBody } from './error-body.js'
import { toApiError } from './error-handler.js'
import { writtenOrDropped, type FastPath, type FastRouteContext } from './fast-route.js'
import { requestIdOf } from './request-id.js'
import { unavailableMessage } from './unavailable-log.js'

/** An answer made of a status and headers, with no body: what a gateway reads of forward-auth. */
export interface HeaderAnswer {
  status: number
  headers: Record<string, string>
}

/**
 * A route answered from the request's headers alone, by a status and headers (forward-auth's /v1/authorize),
 * served ahead of Fastify as the verifyKey fast route is (fast-route.ts): any method, no body. It answers what the
 * Fastify route answers — same status, headers, request id, error shape and metrics — and leaves everything else to
 * it: a request with a body, another path, shutting down, or one the route declines (`answer` gives undefined,
 * decided before any work). test/integration/fast-authorize.test.ts holds the two to the same answers.
 */
export interface FastHeaderRoute {
  url: string
  /**
   * The answer, a promise of it, or undefined: Fastify's route answers this request instead. Only the request's line,
   * headers and connection are read (its body is not the route's).
   */
  answer(request: IncomingMessage): HeaderAnswer | Promise<HeaderAnswer> | undefined
}

export function fastHeaderPath(route: FastHeaderRoute, context: FastRouteContext): FastPath {
  const tally = context.routes.route(route.url)
  // The usual answer's count, taken once: counting it needs no look-up by method and status (route-metrics.ts).
  const allowed = tally.countOf('GET', 200)

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    headers: Record<string, string> | undefined,
    body: string,
    requestId: string,
    started: number,
  ): void {
    const head: string[] = ['x-request-id', requestId]
    if (headers) for (const name in headers) head.push(name, headers[name]!)
    if (body.length > 0) head.push('content-type', 'application/json; charset=utf-8')
    // As Fastify: an empty answer says Content-Length: 0, except to HEAD (whose length would be the GET's).
    if (body.length > 0 || req.method !== 'HEAD') head.push('content-length', String(Buffer.byteLength(body)))
    // Shutting down: a keep-alive connection answered now must not linger for the next request (as fast-route.ts).
    if (context.closing()) head.push('connection', 'close')
    res.writeHead(status, head)
    res.end(body)
    const seconds = (performance.now() - started) / 1000
    if (status === 200 && req.method === 'GET') tally.observeOn(allowed, seconds)
    else tally.observe(req.method!, status, seconds)
  }

  function fail(req: IncomingMessage, res: ServerResponse, err: unknown, requestId: string, started: number): void {
    const error = toApiError(err)
    if (error.code === 'UNAVAILABLE') context.log.warn({ err, requestId }, unavailableMessage(err, error))
    else if (error.statusCode >= 500) context.log.error({ err, requestId }, 'request failed')
    const body = JSON.stringify(errorBody(error, requestId, docsBaseFor(context.docsBaseUrl, req)))
    send(req, res, error.statusCode, error.headers, body, requestId, started)
  }

  const written = (res: ServerResponse, requestId: string, write: () => void) =>
    writtenOrDropped(context.log, res, requestId, write)

  return {
    takes(req) {
      if (req.url !== route.url || context.closing()) return false
      const { 'content-length': length, 'transfer-encoding': encoding } = req.headers
      return encoding === undefined && (length === undefined || length === '0')
    },
    serve(req, res) {
      const started = performance.now()
      let answer: HeaderAnswer | Promise<HeaderAnswer> | undefined
      try {
        answer = route.answer(req)
      } catch (err) {
        const requestId = requestIdOf(req)
        written(res, requestId, () => fail(req, res, err, requestId, started))
        return true
      }
      if (answer === undefined) return false
      const requestId = requestIdOf(req)
      // No body to wait for (takes() saw to it): the request has arrived in full; reading on frees the parser.
      req.resume()
      if (answer instanceof Promise) {
        answer.then(
          (value) => written(res, requestId, () => send(req, res, value.status, value.headers, '', requestId, started)),
          (err) => written(res, requestId, () => fail(req, res, err, requestId, started)),
        )
      } else written(res, requestId, () => send(req, res, answer.status, answer.headers, '', requestId, started))
      return true
    },
  }
}
