import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { Logger } from 'pino'
import fastJson from 'fast-json-stringify'
import { docsBaseFor } from './docs-base.js'
import { errorBody } from './error-body.js'
import { toApiError } from './error-handler.js'
import { memoOf } from '../frozen-memo.js'
import { nodeHttp } from './node-http.js'
import { parseJsonBody } from './json-body.js'
import { requestIdOf } from './request-id.js'
import { compileBodyValidator, schemaErrorFormatter } from './validation.js'
import type { RouteMetrics } from './route-metrics.js'

/**
 * One POST route answered straight off node:http, ahead of Fastify: the verifier's verifyKey, where Fastify's
 * per-request machinery (hooks, reply pipeline, serializer) costs more than the verification itself. It does
 * what the Fastify route does — same JSON parser and prototype-poisoning rules, the same compiled body
 * validator and error messages, the same handler, error shape, request id and metrics — and nothing else.
 * Anything unusual (not JSON, no Content-Length, a body over the limit or empty, shutting down) is left to
 * Fastify, which answers it as it would any route; test/integration/fast-route.test.ts holds the two to the
 * same answers.
 */
export interface FastJsonRoute {
  url: string
  /** The route's body schema, compiled by the same validator Fastify uses for bodies. */
  bodySchema: object
  /**
   * The route's 200 response schema: answers are serialized by it, as Fastify does (an allow-list of fields). Its
   * last property is `requestId`, which the fast route adds to every answer itself (see `headOf` and `succeed`).
   */
  responseSchema: object
  /**
   * The route's handler: the answer for a valid body (a verdict) without its requestId, or a promise of it. An answer
   * frozen with a memo (shared/frozen-memo.ts) is taken to be the same every time it is returned: it is serialised
   * once, into its memo.
   */
  handle(body: unknown): unknown
  /** Headers an answer adds, as the Fastify route adds them (none: undefined). */
  headersOf?(answer: unknown): Record<string, string> | undefined
}

export interface FastRouteContext {
  bodyLimitBytes: number
  docsBaseUrl: string
  log: Logger
  /** True once the server is shutting down: Fastify then answers (503 with Connection: close). */
  closing(): boolean
  routes: RouteMetrics
}

/** An answer serialised up to its requestId's value (`…,"requestId":"`), and that text's length in bytes. */
interface SerializedHead {
  text: string
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

/** `route` as a fast path: JSON bodies in, the route's answers out. */
export function fastJsonPath(route: FastJsonRoute, context: FastRouteContext): FastPath {
  const validate = compileBodyValidator(route.bodySchema)
  const serialize = fastJson(withoutRequestId(route.responseSchema) as Parameters<typeof fastJson>[0])
  const tally = context.routes.route(route.url)
  // The usual answer's count, taken once: counting a 200 needs no look-up by method and status.
  const answered = tally.countOf('POST', 200)
  // A memoised answer's JSON up to its requestId and that JSON's length in bytes, worked out the first time it is
  // answered and kept in its memo under this route's own symbol.
  const HEAD = Symbol('serialised head')

  /**
   * The answer as the response schema serialises it with the request id as its last field: everything before the id
   * is serialised by the schema without it, and only the id is added per request. The id needs no escaping: ids
   * are only ever [A-Za-z0-9._-] (request-id.ts).
   */
  function headOf(answer: object): SerializedHead {
    const memo = memoOf(answer)
    let head = memo?.[HEAD] as SerializedHead | undefined
    if (head === undefined) {
      const json = serialize(answer)
      const text = json.length === 2 ? '{"requestId":"' : `${json.slice(0, -1)},"requestId":"`
      head = { text, bytes: Buffer.byteLength(text), idLength: -1, contentLength: '' }
      if (memo !== undefined) memo[HEAD] = head
    }
    return head
  }

  /** `contentLength`: the payload's length in bytes, as text (answers know it without scanning: see `succeed`). */
  function send(
    res: ServerResponse,
    status: number,
    payload: string,
    contentLength: string,
    requestId: string,
    started: number,
    headers?: Record<string, string>,
  ): void {
    // A flat [name, value, …] list: no header object is built or spread per answer.
    const head: string[] = []
    if (headers) for (const name in headers) head.push(name, headers[name]!)
    head.push(
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      contentLength,
      'x-request-id',
      requestId,
    )
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
    if (error.code === 'UNAVAILABLE') context.log.warn({ err, requestId }, 'store unavailable')
    else if (error.statusCode >= 500) context.log.error({ err, requestId }, 'request failed')
    const body = JSON.stringify(errorBody(error, requestId, docsBaseFor(context.docsBaseUrl, res.req)))
    send(res, error.statusCode, body, String(Buffer.byteLength(body)), requestId, started, error.headers)
  }

  function answer(res: ServerResponse, text: string, requestId: string, started: number): void {
    let body: unknown
    try {
      body = parseJsonBody(text)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    if (!validate(body)) return fail(res, schemaErrorFormatter(validate.errors ?? [], 'body'), requestId, started)
    let result: unknown
    try {
      result = route.handle(body)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    if (result instanceof Promise) {
      result
        .then(
          (value) => succeed(res, value, requestId, started),
          (err) => fail(res, err, requestId, started),
        )
        .catch((err: unknown) => {
          context.log.error({ err, requestId }, 'could not write the answer')
          res.destroy()
        })
    } else succeed(res, result, requestId, started)
  }

  function succeed(res: ServerResponse, value: unknown, requestId: string, started: number): void {
    let head: SerializedHead
    try {
      head = headOf(value as object)
    } catch (err) {
      return fail(res, err, requestId, started)
    }
    // The id is ASCII (request-id.ts): its bytes are its characters, and the payload's length needs no scan of it.
    if (head.idLength !== requestId.length) {
      head.idLength = requestId.length
      head.contentLength = String(head.bytes + requestId.length + 2)
    }
    const payload = `${head.text}${requestId}"}`
    send(res, 200, payload, head.contentLength, requestId, started, route.headersOf?.(value))
  }

  /** Whether the request is one this path takes; decided on the request line and headers alone. */
  function takes(req: IncomingMessage): boolean {
    if (req.url !== route.url || req.method !== 'POST' || context.closing()) return false
    const { 'content-type': type, 'content-length': length, 'transfer-encoding': encoding } = req.headers
    if (type === undefined || encoding !== undefined || length === undefined || !JSON_TYPE.test(type)) return false
    const bytes = Number(length)
    return bytes > 0 && bytes <= context.bodyLimitBytes
  }

  function serve(req: IncomingMessage, res: ServerResponse): boolean {
    const started = performance.now()
    const requestId = requestIdOf(req)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      try {
        answer(
          res,
          chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'),
          requestId,
          started,
        )
      } catch (err) {
        // Only writing the answer can get here (everything before it is caught): never let it take the process down.
        context.log.error({ err, requestId }, 'could not write the answer')
        res.destroy()
      }
    })
    return true
  }

  return { takes, serve }
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
