import type { Static, TSchema } from 'typebox'
import type { KeygateServer } from '../shared/http/build-server.js'
import { V2Envelope, V2PagedEnvelope, type V2Answer } from '../shared/http/v2-route.js'
import type { Caller } from './caller.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { OperationDoc } from './openapi/operation-doc.js'
import { callerOf } from './root-key-auth.js'

/** What the API reference says of a management route; every one takes a root key, so that is not said. */
export type RouteDoc = Pick<OperationDoc, 'summary' | 'description' | 'tag' | 'errors'>

/**
 * One management operation as one wire format serves it: where, its schemas, what the reference says of it, and
 * its adapter (`handle`: the wire's input in, the operation called, the wire's answer out). An operation's whole
 * contract is its operation file and its adapters, one per wire format (`control-plane/operations/<service>/`).
 */
export interface ManagementRoute {
  /** The OpenAPI operation id: `keys.createKey` for v1, `v2.keys.createKey` for v2. */
  id: string
  method: 'GET' | 'POST'
  url: string
  doc: RouteDoc
  schema: { body?: TSchema; querystring?: TSchema; response: { 200: TSchema } }
  /** The adapter, given the input its schema has checked (the query of a GET, else the body). */
  handle: (input: never, caller: Caller, deps: ControlPlaneDeps) => Promise<unknown>
}

/** A v1 adapter, as its file declares it: GET takes its input as a query, POST as a JSON body. */
export interface V1Adapter<Input extends TSchema, Answer extends TSchema> {
  /** `keys.createKey`: served at `/v1/keys.createKey`. */
  operation: string
  method: 'GET' | 'POST'
  doc: RouteDoc
  input: Input
  answer: Answer
  handle: (input: Static<Input>, caller: Caller, deps: ControlPlaneDeps) => Promise<Static<Answer>>
}

/** Unkey's v1 wire format: `{GET,POST} /v1/<service>.<method>`, the answer as it is, errors in v1's body. */
export function v1Route<Input extends TSchema, Answer extends TSchema>(
  adapter: V1Adapter<Input, Answer>,
): ManagementRoute {
  const { operation, method, doc, input, answer, handle } = adapter
  return {
    id: operation,
    method,
    url: `/v1/${operation}`,
    doc,
    schema: { ...(method === 'GET' ? { querystring: input } : { body: input }), response: { 200: answer } },
    handle,
  }
}

/** A v2 adapter, as its file declares it: a JSON body in, `data` (and a list's `pagination`) out. */
export interface V2Adapter<Body extends TSchema, Data extends TSchema> {
  /** `keys.createKey`: served at `/v2/keys.createKey`, documented as `v2.keys.createKey`. */
  operation: string
  doc: RouteDoc
  body: Body
  data: Data
  /** A list: the answer carries `pagination`. */
  paged?: boolean
  handle: (body: Static<Body>, caller: Caller, deps: ControlPlaneDeps) => Promise<V2Answer<Static<Data>>>
}

/**
 * Unkey's v2 wire format: `POST /v2/<service>.<method>`, every answer in `{meta: {requestId}, data}`, every error a
 * problem body (rendered by the one error renderer, shared/http/error-answer.ts).
 */
export function v2Route<Body extends TSchema, Data extends TSchema>(adapter: V2Adapter<Body, Data>): ManagementRoute {
  const { operation, doc, body, data, paged, handle } = adapter
  return {
    id: `v2.${operation}`,
    method: 'POST',
    url: `/v2/${operation}`,
    doc,
    schema: { body, response: { 200: paged ? V2PagedEnvelope(data) : V2Envelope(data) } },
    handle: async (input: Static<Body>, caller: Caller, deps: ControlPlaneDeps) => ({
      meta: { requestId: caller.requestId },
      ...(await handle(input, caller, deps)),
    }),
  }
}

/** Serves each route on `app` (whose hook has authenticated the root key) with the operations' `deps`. */
export function registerManagementRoutes(
  app: KeygateServer,
  deps: ControlPlaneDeps,
  routes: readonly ManagementRoute[],
): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      schema: route.schema,
      handler: async (request) =>
        route.handle((route.method === 'GET' ? request.query : request.body) as never, callerOf(request), deps),
    })
  }
}
