import type { Static, TSchema } from 'typebox'
import { ApiError, fieldError } from '../../shared/errors/errors.js'
import type { Route, RouteRequest } from '../../shared/http/route.js'
import { V2Envelope, V2PagedEnvelope, type V2Answer } from '../../shared/http/v2-route.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { OperationDoc } from '../../shared/http/operation-doc.js'

/** What the API reference says of a management route; every one takes a root key, so that is not said. */
export type RouteDoc = Pick<OperationDoc, 'summary' | 'description' | 'tag' | 'errors'>

/**
 * One management operation as one wire format serves it: a route (shared/http/route.ts) whose caller is a root key,
 * made of a domain's adapter by `v1Route` or `v2Route`. An operation's whole contract is its operation file and its
 * adapters, one per wire format (`control-plane/<domain>/`). `Answer`, its answer's schema, stays known to whoever
 * holds the route itself (a check that the pages' shapes are the wire's), not to the lists of routes.
 */
export interface ManagementRoute<Answer extends TSchema = TSchema> extends Route<ControlPlaneDeps, Caller> {
  response: Answer
}

/**
 * The management API's caller: the root key of the `Authorization` header (refused: UNAUTHORIZED), checked before the
 * body is read, so that a missing or unknown root key is answered whatever the body holds.
 */
export async function rootKeyCaller(request: RouteRequest, deps: ControlPlaneDeps): Promise<Caller> {
  const principal = await deps.authenticateRootKey(request.headers.authorization)
  return { principal, requestId: request.id, log: request.log }
}

/**
 * What every adapter may declare beside its handler. `authorize`: the operation's check of the root key's rights,
 * run on the input its schema has checked before the adapter maps it, so that a root key that may not make the call
 * learns that before anything about its input. `wording`: how this wire says a domain rule the operation's error
 * names (ApiErrorDetails.rule), where its contract words it otherwise.
 */
export interface AdapterChecks<Input> {
  authorize?: (input: Input, caller: Caller) => void
  wording?: Readonly<Record<string, { field: string; problem: string }>>
}

/** An adapter's handler with its declared checks around it: authorize first, then the handler, errors worded. */
function checked<Input, Answer>(
  { authorize, wording }: AdapterChecks<Input>,
  handle: (input: Input, caller: Caller, deps: ControlPlaneDeps) => Promise<Answer>,
): (input: Input, caller: Caller, deps: ControlPlaneDeps) => Promise<Answer> {
  return async (input, caller, deps) => {
    authorize?.(input, caller)
    if (!wording) return handle(input, caller, deps)
    try {
      return await handle(input, caller, deps)
    } catch (err) {
      const words = err instanceof ApiError && err.details?.rule !== undefined ? wording[err.details.rule] : undefined
      if (!words) throw err
      throw fieldError((err as ApiError).code, words.field, words.problem)
    }
  }
}

/** A v1 adapter, as its file declares it: GET takes its input as a query, POST as a JSON body. */
export interface V1Adapter<Input extends TSchema, Answer extends TSchema> extends AdapterChecks<Static<Input>> {
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
): ManagementRoute<Answer> {
  const { operation, method, doc, input, answer } = adapter
  const handle = checked(adapter, adapter.handle)
  return {
    id: operation,
    method,
    url: `/v1/${operation}`,
    doc: { ...doc, rootKey: true },
    input,
    response: answer,
    authenticate: rootKeyCaller,
    handle: (input: Static<Input>, caller: Caller, deps: ControlPlaneDeps) => handle(input, caller, deps),
  }
}

/** A v2 adapter, as its file declares it: a JSON body in, `data` (and a list's `pagination`) out. */
export interface V2Adapter<Body extends TSchema, Data extends TSchema> extends AdapterChecks<Static<Body>> {
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
 * Unkey's v2 wire format: `POST /v2/<service>.<method>`, every answer in `{meta: {requestId}, data}` (put there by
 * the route primitive), every error a problem body (rendered by the one error renderer, shared/http/error-answer.ts).
 */
export function v2Route<Body extends TSchema, Data extends TSchema>(adapter: V2Adapter<Body, Data>): ManagementRoute {
  const { operation, doc, body, data, paged } = adapter
  const handle = checked(adapter, adapter.handle)
  return {
    id: `v2.${operation}`,
    method: 'POST',
    url: `/v2/${operation}`,
    doc: { ...doc, rootKey: true },
    input: body,
    response: paged ? V2PagedEnvelope(data) : V2Envelope(data),
    authenticate: rootKeyCaller,
    handle: (input: Static<Body>, caller: Caller, deps: ControlPlaneDeps) => handle(input, caller, deps),
  }
}
