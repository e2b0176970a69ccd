import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import fastJson from 'fast-json-stringify'
import { docsBaseFor } from './docs-base.js'
import { errorAnswerOf } from './error-answer.js'
import { toApiError } from './error-handler.js'
import type { AnyRoute, RouteRequest } from './route.js'
import { memoOf } from '../frozen-memo.js'
import { nodeHttp } from './node-http.js'
import { isV2Path } from './problem-body.js'
import { parseJsonBody } from './json-body.js'
import { requestIdOf } from './request-id.js'
import { compileBodyValidator, schemaErrorFormatter } from './validation.js'
import type { RouteMetrics } from './route-metrics.js'
import { unavailableMessage } from './unavailable-log.js'

/**
 * A JSON route (route.ts) answered straight off node:http, ahead of Fastify: the verifier's verifyKey (v1
 * and v2), where Fastify's per-request machinery (hooks, reply pipeline, serializer) costs more than the verification
 * itself. It does what the route does on Fastify — the root key before the body, the same JSON parser and
 * prototype-poisoning rules, the same compiled body validator and error messages, the same handler, the wire's answer
 * and error shapes, request id and metrics — and nothing else. Anything unusual (not JSON, no Content-Length, a body
 * over the limit or empty, shutting down) is left to Fastify, which answers it as it would any route;
 * test/integration/fast-route.test.ts holds the two to the same answers.
 */
export interface FastRouteContext {
  bodyLimitBytes: number
  docsBaseUrl: string
  log: Logger
  /** True once the server is shutting down: Fastify then answers (503 with Connection: close). */
  closing(): boolean
  routes: RouteMetrics
}

/**
 * An answer serialised around its request id: `before` the id and `after` it (v1: `{…,"requestId":"` and `"}`; v2:
 * `{"meta":{"requestId":"` and `"},"data":{…}}`), and the bytes of both.
 */
interface SerializedAnswer {
  before: string
  after: string
  bytes: number
  /**
   * The Content-Length of this answer with a request id of `idLength` characters, as text: ids are mostly of one
   * length (request-id.ts), so a number is not turned into a string per answer.
   */
  idLength: number
  contentLength: string
}

const JSON_TYPE = /^application\/json\s*(;|$)/i

/**
 * A route served straight off node:http: whether it takes a request (on its line and headers alone), and serving it.
 */
export interface FastPath {
  takes(req: IncomingMessage): boolean
  /** Answers the request, or returns false before touching it: Fastify answers it then. */
  serve(req: IncomingMessage, res: ServerResponse): boolean
}

/** `route` as a fast path: JSON bodies in, the route's answers out in its wire's shape. */
export function fastJsonPath(route: AnyRoute, context: FastRouteContext): FastPath {
  if (route.input === undefined) throw new Error(`a fast route takes a JSON body: ${route.url} declares none`)
  const validate = compileBodyValidator(route.input)
  const v2 = isV2Path(route.url)
  const frame = v2 ? v2Frame(route.response) : v1Frame(route.response)
  const tally = context.routes.route(route.url)
  // The usual answer's count, taken once: counting a 200 needs no look-up by method and status.
  const answered = tally.countOf('POST', 200)
  // A memoised answer's serialisation, worked out the first time it is answered and kept in its memo under this
  // path's own symbol (one answer may be served by several paths, each with its own schema).
  const SERIALISED = Symbol('serialised answer')

  /**
   * The answer as the response schema serialises it: everything but the request id is serialised once per answer,
   * and only the id is added per request. The id needs no escaping: ids are only ever [A-Za-z0-9._-] (request-id.ts).
   */
  function serialised(answer: object): SerializedAnswer {
    const memo = memoOf(answer)
    let done = memo?.[SERIALISED] as SerializedAnswer | undefined
    if (done === undefined) {
      const [before, after] = frame(answer)
      done = {
        before,
        after,
        bytes: Buffer.byteLength(before) + Buffer.byteLength(after),
        idLength: -1,
        contentLength: '',
      }
      if (memo !== undefined) memo[SERIALISED] = done
    }
    return done
  }

  /** `contentLength`: the payload's length in bytes, as text (answers know it without scanning: see `succeed`). */
  function send(
    res: ServerResponse,
    status: number,
    contentType: string,
    payload: string,
    contentLength: string,
    requestId: string,
    started: number,
    headers?: Record<string, string>,
  ): void {
    // A flat [name, value, …] list: no header object is built or spread per answer.
    const head: string[] = []
    if (headers) for (const name in headers) head.push(name, headers[name]!)
    head.push('content-type', contentType, 'content-length', contentLength, 'x-request-id', requestId)
    // Shutting down: a keep-alive connection answered now must not linger for the next request.
    if (context.closing()) head.push('connection', 'close')
    res.writeHead(status, head)
    res.end(payload)
    const seconds = (performance.now() - started) / 1000
    if (status === 200) tally.observeOn(answered, seconds)
    else tally.observe('POST', status, seconds)
  }

  function fail(res: ServerResponse, err: unknown, requestId: string, started: number): void {
    const error = toApiError(err)
    if (error.code === 'UNAVAILABLE') context.log.warn({ err, requestId }, unavailableMessage(err, error))
    else if (error.statusCode >= 500) context.log.error({ err, requestId }, 'request failed')
    const answer = errorAnswerOf(error, route.url, requestId, () => docsBaseFor(context.docsBaseUrl, res.req))
    const body = JSON.stringify(answer.body)
    send(
      res,
      answer.status,
      answer.contentType,
      body,
      String(Buffer.byteLength(body)),
      requestId,
      started,
      answer.headers,
    )
  }

  function answer(request: RouteRequest, res: ServerResponse, text: string, caller: unknown, started: number) {
    const requestId = request.id
    let body: unknown
    try {
      body = parseJsonBody(text)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    if (!validate(body)) return fail(res, schemaErrorFormatter(validate.errors ?? [], 'body'), requestId, started)
    let result: unknown
    try {
      result = route.handle(body as never, caller, undefined, request)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    if (result instanceof Promise) {
      result
        .then(
          (value) => succeed(request, res, value, started),
          (err) => fail(res, err, requestId, started),
        )
        .catch((err: unknown) => {
          context.log.error({ err, requestId }, 'could not write the answer')
          res.destroy()
        })
    } else succeed(request, res, result, started)
  }

  function succeed(request: RouteRequest, res: ServerResponse, value: unknown, started: number): void {
    const requestId = request.id
    let done: SerializedAnswer
    try {
      // v2's answer is `{data}`: its data is what is serialised (and memoised) around the envelope's request id.
      done = serialised((v2 ? (value as { data: object }).data : value) as object)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    // The id is ASCII (request-id.ts): its bytes are its characters, and the payload's length needs no scan of it.
    if (done.idLength !== requestId.length) {
      done.idLength = requestId.length
      done.contentLength = String(done.bytes + requestId.length)
    }
    const payload = `${done.before}${requestId}${done.after}`
    send(
      res,
      200,
      JSON_ANSWER,
      payload,
      done.contentLength,
      requestId,
      started,
      route.headersOf?.(value as never, request),
    )
  }

  /** Whether the request is one this path takes; decided on the request line and headers alone. */
  function takes(req: IncomingMessage): boolean {
    if (req.url !== route.url || req.method !== 'POST' || context.closing()) return false
    const { 'content-type': type, 'content-length': length, 'transfer-encoding': encoding } = req.headers
    if (type === undefined || encoding !== undefined || length === undefined || !JSON_TYPE.test(type)) return false
    const bytes = Number(length)
    return bytes > 0 && bytes <= context.bodyLimitBytes
  }

  /**
   * Reads the body, then answers: `caller` is the root key's principal, or its refusal. A refusal is answered as soon
   * as it is known, body or no body, as Fastify answers its onRequest hook's (what arrives of the body is dropped).
   */
  function readThenAnswer(request: RouteRequest, res: ServerResponse, caller: unknown, started: number): void {
    const { id: requestId, raw: req } = request
    let refused = false
    const refuse = (err: unknown) => {
      refused = true
      written(res, requestId, () => fail(res, err, requestId, started))
    }
    // Nothing reads the body then: Node drops it once the answer is written (the connection is kept).
    if (caller instanceof Error) return refuse(caller)
    // Registered first: a refusal settled after the body is answered once, here.
    if (caller instanceof Promise) caller.catch(refuse)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => {
      if (!refused) chunks.push(chunk)
    })
    req.on('end', () => {
      if (refused) return
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')
      try {
        if (caller instanceof Promise) {
          caller.then(
            (found) => written(res, requestId, () => answer(request, res, text, found, started)),
            () => {},
          )
        } else answer(request, res, text, caller, started)
      } catch (err) {
        // Only writing the answer can get here (everything before it is caught): never let it take the process down.
        context.log.error({ err, requestId }, 'could not write the answer')
        res.destroy()
      }
    })
  }

  const written = (res: ServerResponse, requestId: string, write: () => void) =>
    writtenOrDropped(context.log, res, requestId, write)

  function serve(req: IncomingMessage, res: ServerResponse): boolean {
    const started = performance.now()
    const request: RouteRequest = { id: requestIdOf(req), headers: req.headers, raw: req, log: context.log }
    // The caller is authenticated before the body is read, as the route's onRequest hook does on Fastify: its refusal
    // wins.
    let caller: unknown
    if (route.authenticate) {
      try {
        caller = route.authenticate(request, undefined)
      } catch (err) {
        caller = err instanceof Error ? err : new Error(String(err))
      }
    }
    readThenAnswer(request, res, caller, started)
    return true
  }

  return { takes, serve }
}

const JSON_ANSWER = 'application/json; charset=utf-8'

/** Serialises an answer around its request id (before, after). */
type Frame = (answer: object) => [string, string]

/** v1: `{…answer, "requestId": "<id>"}`, the id last (the response schema ends with it). */
function v1Frame(responseSchema: object): Frame {
  const serialize = fastJson(withoutRequestId(responseSchema) as Parameters<typeof fastJson>[0])
  return (answer) => {
    const json = serialize(answer)
    return [json.length === 2 ? '{"requestId":"' : `${json.slice(0, -1)},"requestId":"`, '"}']
  }
}

/** v2: `{"meta": {"requestId": "<id>"}, "data": answer}`, as the envelope's schema serialises it (meta first). */
function v2Frame(responseSchema: object): Frame {
  const { properties } = responseSchema as { properties: Record<string, object> }
  if (Object.keys(properties).join() !== 'meta,data')
    throw new Error("a v2 fast route's response schema must be the envelope {meta, data}")
  const serialize = fastJson(properties.data as Parameters<typeof fastJson>[0])
  return (answer) => ['{"meta":{"requestId":"', `"},"data":${serialize(answer)}}`]
}

/**
 * Writes an answer; only writing can throw there (a header value Node refuses). Called from the server's request
 * listener or a callback, a throw would take the process down or go unheard: the connection is dropped instead.
 */
export function writtenOrDropped(log: Logger, res: ServerResponse, requestId: string, write: () => void): void {
  try {
    write()
  } catch (err) {
    log.error({ err, requestId }, 'could not write the answer')
    res.destroy()
  }
}

/** Fastify's `serverFactory`: a server that serves the fast paths itself and hands every other request to Fastify. */
export function fastRouteServerFactory(paths: FastPath[]) {
  // Fastify hands over its options; the server gets the timeouts Fastify would have set on its own.
  return (
    fastify: RequestListener,
    options: {
      keepAliveTimeout?: number
      requestTimeout?: number
      connectionTimeout?: number
      maxRequestsPerSocket?: number
      http?: object
    },
  ): Server => {
    const server = nodeHttp.createServer(options.http ?? {}, (req, res) => {
      for (const path of paths) {
        if (path.takes(req) && path.serve(req, res)) return
      }
      fastify(req, res)
    })
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout)
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket
    return server
  }
}

/** The response schema without its last property, `requestId` (added per request by `succeed`). */
function withoutRequestId(schema: object): object {
  const { properties, required, ...rest } = schema as {
    properties: Record<string, unknown>
    required?: string[]
  }
  if (Object.keys(properties).at(-1) !== 'requestId')
    throw new Error("a fast route's response schema must end with requestId: it is added to each answer last")
  const { requestId: _requestId, ...others } = properties
  return { ...rest, properties: others, required: (required ?? []).filter((name) => name !== 'requestId') }
}
