import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { errors as undiciErrors, Pool, type Dispatcher } from 'undici'
import { ApiError, badRequest, StoreUnavailableError } from '../shared/errors/errors.js'
import { docsBaseFor } from '../shared/http/docs-base.js'
import { errorBody } from '../shared/http/error-body.js'
import { clientErrorHandler } from '../shared/http/error-handler.js'
import { nodeHttp } from '../shared/http/node-http.js'
import { requestIdOf } from '../shared/http/request-id.js'
import type { GatewayPolicy, ProxySettings } from '../shared/config/settings.js'
import { policyRequest, readGatewayKey, type GatewayCheck } from './gateway-request.js'
import type { KeyVerifier } from './key-verifier.js'
import { upstreamRequestHeaders } from './proxy-headers.js'
import { upstreamTarget } from './proxy-target.js'
import { UpstreamExchange, type ExchangeEnds } from './upstream-exchange.js'
import { createProxyMetrics } from './proxy-metrics.js'
import type { Verdict } from '../shared/verification/verification.js'
import type { GatewayRefusalCode } from '../shared/errors/gateway-codes.js'
import { proxyErrorPages } from './proxy-error-pages.js'
import { ERROR_PAGE_HEADERS } from '../shared/http/error-page-html.js'
import { gatewayAnswer, refusalMessage, unavailable } from './verdict-status.js'

export interface ProxyOptions extends Omit<ProxySettings, 'port'> {
  docsBaseUrl: string
}

export interface ProxyDeps {
  verifier: KeyVerifier
  policy: GatewayPolicy
  log: Logger
  registry: Registry
  options: ProxyOptions
}

/** The key a request carries and the header it was read from. */
type Presented = Pick<GatewayCheck, 'key' | 'keyFrom'>

export interface ReverseProxy {
  server: Server
  close(): Promise<void>
}

/**
 * Reverse-proxy mode: every request whose key verifies is forwarded to the upstream through one bounded
 * undici Pool, method, path, query, headers and body streamed as they come (less the credentials the proxy took:
 * proxy-headers.ts, proxy-target.ts); anything else is answered like
 * forward-auth (401/403/429) in the contract's error shape, its code the X-Keygate-Code it is sent with.
 * Upstream down → 502, too slow → 504. Clients cannot name the api, so the policy must: an api id, or
 * `anyApi` (the operator's explicit choice); without either the proxy is not built.
 */
export function createReverseProxy(deps: ProxyDeps): ReverseProxy {
  const { verifier, policy, log, options } = deps
  if (policy.apiId === undefined && !policy.anyApi) {
    throw new Error('the reverse proxy needs the api keys must belong to (apiId), or anyApi to accept every api')
  }
  if (policy.apiId === undefined) log.warn('AUTHORIZE_ANY_API: the proxy forwards requests with a key of any api')
  const pool = new Pool(options.upstreamUrl, {
    connections: options.connections,
    connectTimeout: Math.min(options.timeoutMs, 5_000),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  })
  const metrics = createProxyMetrics(deps.registry)

  /** An answer of Keygate's own: an ApiError, or a refusal carrying its X-Keygate-Code as the body's code. */
  function fail(
    res: ServerResponse,
    requestId: string,
    error: ApiError | { statusCode: number; code: GatewayRefusalCode; message: string },
    headers: Record<string, string> = {},
  ): void {
    metrics.answered(error.statusCode, 'keygate')
    if (res.headersSent) {
      res.destroy()
      return
    }
    const body = JSON.stringify(errorBody(error, requestId, docsBaseFor(options.docsBaseUrl, res.req)))
    res.writeHead(error.statusCode, {
      ...(error instanceof ApiError ? error.headers : undefined),
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
    })
    res.end(body)
  }

  /**
   * What the proxy does at an exchange's turning points, for one request: its methods are the class's own, so that a
   * proxied request costs one small object here rather than a closure for each.
   */
  class ForwardedEnds implements ExchangeEnds {
    constructor(
      private readonly req: IncomingMessage,
      private readonly res: ServerResponse,
      private readonly requestId: string,
    ) {}

    answered(status: number): void {
      metrics.answered(status, 'upstream')
    }

    failed(err: Error): void {
      this.req.resume()
      fail(this.res, this.requestId, upstreamError(err))
      if (!(err instanceof undiciErrors.UndiciError))
        log.warn({ err, requestId: this.requestId }, 'proxy request failed')
    }

    unpassable(err: unknown): void {
      log.warn({ err, requestId: this.requestId }, 'upstream response headers could not be passed on')
      fail(
        this.res,
        this.requestId,
        new ApiError('BAD_GATEWAY', 'the upstream answered with headers that cannot be passed on'),
      )
    }
  }

  // Clients talk to the proxy directly: their X-Keygate-* headers never choose the policy, which is the same for
  // every request.
  const { request: checked } = policyRequest(policy)
  const passAuthorization = options.passAuthorization === true

  // The pages its bodies link to, where they link to them.
  const errorPage = proxyErrorPages(options.docsBaseUrl)

  /** Checks the request's key (synchronously on a cache hit), then refuses it or forwards it. */
  function handle(req: IncomingMessage, res: ServerResponse, started: number): void {
    const requestId = requestIdOf(req)
    const page = errorPage(req)
    if (page !== undefined) return servePage(req, res, requestId, started, page)
    const presented = readGatewayKey(req.headers, policy)
    let verdict: Verdict | Promise<Verdict> | undefined
    try {
      verdict = presented.key === undefined ? undefined : verifier.verify(presented.key, checked, req)
    } catch (err) {
      return failed(res, requestId, started, err)
    }
    if (!(verdict instanceof Promise)) return decided(req, res, requestId, started, presented, verdict)
    // A client that leaves while its key is read is answered nothing, and nothing is forwarded for it.
    verdict
      .then(
        (read) => (res.destroyed ? req.resume() : decided(req, res, requestId, started, presented, read)),
        (err: unknown) => failed(res, requestId, started, err),
      )
      .catch((err: unknown) => crashed(res, requestId, started, err))
  }

  /** An error page (proxy-error-pages.ts): Keygate's own answer, with its request id, timed as every answer is. */
  function servePage(req: IncomingMessage, res: ServerResponse, requestId: string, started: number, page: string) {
    req.resume()
    metrics.answered(200, 'keygate')
    res.once('close', () => {
      if (res.writableFinished) metrics.finished(200, 'keygate', (performance.now() - started) / 1000)
    })
    res.writeHead(200, {
      ...ERROR_PAGE_HEADERS,
      'content-length': Buffer.byteLength(page),
      'x-request-id': requestId,
    })
    res.end(req.method === 'HEAD' ? undefined : page)
  }

  /** An answer of Keygate's own before anything is forwarded, timed as every answer is. */
  function refuse(
    res: ServerResponse,
    requestId: string,
    started: number,
    error: Parameters<typeof fail>[2],
    headers?: Record<string, string>,
  ): void {
    res.once('close', () => {
      if (res.writableFinished) metrics.finished(res.statusCode, 'keygate', (performance.now() - started) / 1000)
    })
    fail(res, requestId, error, headers)
  }

  function failed(res: ServerResponse, requestId: string, started: number, err: unknown): void {
    if (err instanceof StoreUnavailableError) return refuse(res, requestId, started, unavailable(err))
    log.error({ err, requestId }, 'proxy handler failed')
    refuse(res, requestId, started, new ApiError('INTERNAL_SERVER_ERROR', 'internal error'))
  }

  function decided(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    started: number,
    { key, keyFrom }: Presented,
    verdict: Verdict | undefined,
  ): void {
    if (verdict?.code !== 'VALID') {
      const answer = gatewayAnswer(verdict ?? { code: 'MISSING_KEY' }, verifier.now())
      req.resume()
      if (answer.code === 'VALID') return failed(res, requestId, started, new Error('a refused verdict answered VALID'))
      const message = refusalMessage(answer.code, policy.keyHeader, keyFrom)
      return refuse(res, requestId, started, { statusCode: answer.status, code: answer.code, message }, answer.headers)
    }
    // Never so (a VALID verdict names its key, shared/verification/verification.ts, and only a request with a key is
    // checked): a bug answers 500, never forwards.
    if (verdict.keyId === undefined || key === undefined)
      return failed(res, requestId, started, new Error('a VALID verdict without a key id or a key'))
    // Origin-form targets only (`OPTIONS *` and absolute URLs are not ours to pass on).
    if (!req.url?.startsWith('/')) {
      req.resume()
      return refuse(res, requestId, started, badRequest('the request target must be a path starting with /'))
    }
    forward(req, res, requestId, started, key, verdict.keyId, verdict.ownerId)
  }

  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    started: number,
    key: string,
    keyId: string,
    ownerId: string | undefined,
  ): void {
    const exchange = new UpstreamExchange(res, requestId, new ForwardedEnds(req, res, requestId), options.timeoutMs)
    const headers = upstreamRequestHeaders(req.headers, {
      keyId,
      ownerId,
      requestId,
      clientAddress: req.socket.remoteAddress,
      keyHeader: policy.keyHeader,
      key,
      passAuthorization,
    })
    const hasBody =
      req.headers['content-length'] !== undefined
        ? req.headers['content-length'] !== '0'
        : req.headers['transfer-encoding'] !== undefined
    // A pipelined request's response waits behind the ones before it without a socket: node:http never closes it if
    // the client leaves, and the upstream, paused for a client that will never read, would hold its connection for
    // good. The client's socket is watched instead until the response's own 'close' (below) stops that.
    const waiting = res.socket === null ? watchPipelined(req.socket, exchange) : undefined
    // One listener for both ends: a response sent in full is timed; one cut short (the client left) aborts the
    // upstream request and frees its connection. Registered once the upstream request is built: a throw before it
    // is crashed()'s to answer and time, which must not leave a second timer behind.
    res.on('close', () => {
      waiting?.delete(exchange)
      if (res.writableFinished) metrics.finished(res.statusCode, exchange.source, (performance.now() - started) / 1000)
      else exchange.clientLeft()
    })
    pool.dispatch(
      {
        method: req.method as Dispatcher.HttpMethod,
        path: upstreamTarget(req.url!, key),
        headers,
        body: hasBody ? req : undefined,
      },
      exchange,
    )
  }

  /**
   * A bug on Keygate's side: a 500 if nothing was sent yet (counted and timed as every answer is), else the response
   * is cut (it was counted when it started); never the process.
   */
  function crashed(res: ServerResponse, requestId: string, started: number, err: unknown): void {
    log.error({ err, requestId }, 'proxy handler failed')
    try {
      if (res.headersSent) res.destroy()
      else refuse(res, requestId, started, new ApiError('INTERNAL_SERVER_ERROR', 'internal error'))
    } catch {
      res.destroy()
    }
  }

  const server = nodeHttp.createServer((req, res) => {
    const started = performance.now()
    try {
      handle(req, res, started)
    } catch (err) {
      crashed(res, requestIdOf(req), started, err)
    }
  })
  // What Node's parser rejects (malformed, headers too large, too slow) is answered as on every Keygate port.
  server.on('clientError', clientErrorHandler(options.docsBaseUrl))
  return {
    server,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      })
      await pool.close()
    },
  }
}

/** The exchanges of pipelined requests waiting on a client's socket for their turn: one 'close' listener a socket. */
const pipelined = new WeakMap<Socket, Set<UpstreamExchange>>()

/**
 * Watches the client's socket for a pipelined exchange until its response has one: the set it waits in, from which
 * the response's own 'close' takes it (its turn came and it was answered, or it was cut short); undefined when the
 * socket is gone already (the exchange is told at once).
 */
function watchPipelined(socket: Socket, exchange: UpstreamExchange): Set<UpstreamExchange> | undefined {
  if (socket.destroyed) {
    exchange.clientLeft()
    return undefined
  }
  const known = pipelined.get(socket)
  const waiting = known ?? new Set<UpstreamExchange>()
  if (known === undefined) {
    pipelined.set(socket, waiting)
    socket.once('close', () => {
      pipelined.delete(socket)
      for (const left of waiting) left.clientLeft()
    })
  }
  waiting.add(exchange)
  return waiting
}

/** Why the upstream could not answer, as the contract's 502 or 504 (or 400 for what undici refuses to send). */
function upstreamError(err: unknown): ApiError {
  if (err instanceof undiciErrors.InvalidArgumentError || err instanceof undiciErrors.NotSupportedError) {
    return badRequest(`the request cannot be forwarded: ${err.message}`)
  }
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new ApiError('GATEWAY_TIMEOUT', 'the upstream did not answer in time')
  }
  return new ApiError('BAD_GATEWAY', 'the upstream refused the connection or broke it')
}
