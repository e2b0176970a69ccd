import type { TSchema } from 'typebox'
import type { IncomingMessage } from 'node:http'
import type { Principal } from '../root-key-principal.js'
import type { KeygateServer } from './build-server.js'
import { authenticateBeforeBody, type Authenticate } from './request-principal.js'
import { isV2Path } from './problem-body.js'

/**
 * A JSON operation defined once and served two ways from that one definition: ahead of Fastify on a listening
 * verifier (fast-route.ts: the hot path) and as a Fastify route (`registerJsonEndpoint`: inject, the control plane,
 * and whatever the fast path leaves to Fastify). Both parse and validate the body alike, authenticate the root key
 * before the body when the endpoint takes one, call the same `handle`, and answer in the wire's shape, which the
 * path says: `/v1/…` answers `{…, requestId}`, `/v2/…` answers `{meta: {requestId}, data}`, and errors are rendered
 * for that wire by the one error renderer (error-answer.ts).
 */
export interface JsonEndpoint {
  url: string
  bodySchema: TSchema | object
  /**
   * The 200 answer as the wire shows it, which serialises every answer (an allow-list of fields): on v1 its last
   * property is `requestId`, on v2 it is the envelope `{meta, data}` (shared/http/v2-route.ts, V2Envelope).
   */
  responseSchema: TSchema | object
  /**
   * The root key's caller, from the `Authorization` header, before the body is read (a missing or unknown root key
   * is refused whatever the body): endpoints that take a root key. Synchronous when it can be.
   */
  authenticate?: Authenticate
  /**
   * The answer for a valid body (v1: without its requestId; v2: the envelope's `data`), or a promise of it. An answer
   * frozen with a memo (shared/frozen-memo.ts) is taken to be the same every time it is returned: the fast path
   * serialises it once, into its memo. `caller` is `authenticate`'s principal; `request` the HTTP request itself
   * (verifyKey reads the client's address from it, for allow-lists).
   */
  handle(body: unknown, caller: Principal | undefined, request: IncomingMessage): unknown
  /** Headers an answer adds (none: undefined). */
  headersOf?(answer: unknown): Record<string, string> | undefined
}

/** Registers `endpoint` on Fastify: the same answers as its fast path (test/integration/fast-route.test.ts). */
export function registerJsonEndpoint(app: KeygateServer, endpoint: JsonEndpoint): void {
  const v2 = isV2Path(endpoint.url)
  void app.register(async (scope: KeygateServer) => {
    if (endpoint.authenticate) authenticateBeforeBody(scope, endpoint.authenticate)
    scope.post(
      endpoint.url,
      { schema: { body: endpoint.bodySchema, response: { 200: endpoint.responseSchema } } },
      async (request, reply) => {
        const answer = await endpoint.handle(request.body, request.principal ?? undefined, request.raw)
        const headers = endpoint.headersOf?.(answer)
        if (headers) void reply.headers(headers)
        return v2 ? { meta: { requestId: request.id }, data: answer } : { ...(answer as object), requestId: request.id }
      },
    )
  })
}
