import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import type { KeygateServer } from './keygate-server.js'
import type { OperationDoc } from './operation-doc.js'
import { isV2Path } from './problem-body.js'
import { inV2Envelope, type V2Answer } from './v2-route.js'

/**
 * What a route reads of its request, wherever it is served: a Fastify request is one, and the fast path
 * (fast-route.ts) makes one from node:http's. Nothing else of HTTP reaches a route.
 */
export interface RouteRequest {
  /** This request's id (the X-Request-Id header, answered back). */
  readonly id: string
  readonly headers: IncomingHttpHeaders
  /** The HTTP request itself: its client's address (allow-lists) and whether it came over TLS (cookies). */
  readonly raw: IncomingMessage
  readonly log: FastifyBaseLogger
}

/**
 * One JSON operation as one wire format serves it, in one declaration: where, its schemas, what the API reference
 * says of it, who may call (checked before the body is read), and its handler. Every v1 and v2 call is one: the
 * management API's (control-plane/http/management-route.ts makes them of each domain's adapters), the customer
 * portal's session calls, and what the verifier serves. `serveRoutes` serves them on Fastify; the verifier's hot path
 * serves verifyKey's straight off node:http from the same declaration (fast-route.ts).
 *
 * The wire is the path's: `/v2/…` answers `{meta: {requestId}, data, pagination?}` from what the handler answers
 * (`{data, pagination?}`); `/v1/…` answers what the handler answers, with `requestId` added last when the answer's
 * schema ends with it (keys.verifyKey's). Errors are thrown as ApiError and rendered for the wire by the one error
 * renderer (error-answer.ts).
 */
export interface Route<Deps = void, Caller = undefined> {
  /** The OpenAPI operation id: `keys.createKey` for v1, `v2.keys.createKey` for v2. */
  id: string
  method: 'GET' | 'POST'
  url: string
  doc: OperationDoc
  /** What it takes, validated before the handler: the query of a GET, else the JSON body (none: a GET of nothing). */
  input?: TSchema | object
  /** The 200 answer as the wire shows it: it serialises every answer (an allow-list of fields). */
  response: TSchema | object
  /**
   * The caller, from the request line and headers, before the body is read: a missing or refused credential is
   * answered whatever the body holds. Synchronous when it can be (the verifier's hot path). None: anyone may call.
   */
  authenticate?: (request: RouteRequest, deps: Deps) => Caller | Promise<Caller>
  /**
   * The answer for a valid input (v1: without its requestId; v2: `{data, pagination?}`), or a promise of it. An
   * answer frozen with a memo (shared/frozen-memo.ts; on v2 its `data`) is taken to be the same every time it is
   * returned: the fast path serialises it once, into its memo.
   */
  handle(input: never, caller: Caller, deps: Deps, request: RouteRequest): unknown
  /** Headers an answer adds (a cookie, the name of the limit that refused): none, undefined. */
  headersOf?: (answer: never, request: RouteRequest, deps: Deps) => Record<string, string> | undefined
}

/**
 * Any route of a list, whatever its caller: the list's own declarations keep their types (`handle` is a method, so a
 * route of any caller is one of these).
 */
export type AnyRoute<Deps = void> = Route<Deps, unknown>

/** Whether a v1 answer carries the request id as its last property: when its schema ends with it. */
export function answersRequestId(response: TSchema | object): boolean {
  const properties = (response as { properties?: Record<string, unknown> }).properties
  return properties !== undefined && Object.keys(properties).at(-1) === 'requestId'
}

/** What a route's handler answered, as its wire sends it (before serialisation): see Route. */
export function wireAnswerOf(route: Pick<AnyRoute, 'url' | 'response'>, requestId: string, answer: unknown): unknown {
  if (isV2Path(route.url)) return inV2Envelope(requestId, answer as V2Answer<unknown>)
  return answersRequestId(route.response) ? { ...(answer as object), requestId } : answer
}

// The caller each request was authenticated as, for what runs between authentication and the handler (the
// management API's rate limit counts per root key).
const callers = new WeakMap<object, unknown>()

/** The caller a route's `authenticate` found for `request` (undefined before it ran, or for an open route). */
export function authenticatedCaller(request: FastifyRequest): unknown {
  return callers.get(request)
}

/** Serves each route on `app`, handing `deps` to its authentication and handler. */
export function serveRoutes<Deps>(app: KeygateServer, deps: Deps, routes: readonly AnyRoute<Deps>[]): void {
  for (const route of routes) {
    const { authenticate } = route
    app.route({
      method: route.method,
      url: route.url,
      schema: {
        ...(route.input === undefined
          ? {}
          : route.method === 'GET'
            ? { querystring: route.input }
            : { body: route.input }),
        response: { 200: route.response },
      },
      ...(authenticate && {
        onRequest: async (request: FastifyRequest) => {
          callers.set(request, await authenticate(request, deps))
        },
      }),
      handler: async (request, reply) => {
        const input = route.method === 'GET' ? request.query : request.body
        const answer = await route.handle(input as never, callers.get(request), deps, request)
        const headers = route.headersOf?.(answer as never, request, deps)
        if (headers) void reply.headers(headers)
        return wireAnswerOf(route, request.id, answer)
      },
    })
  }
}
