import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import { errors as undiciErrors, Pool, type Dispatcher } from 'undici'
import { ApiError, StoreUnavailableError } from '../shared/errors.js'
import { errorBody } from '../shared/http/error-body.js'
import { requestIdOf } from '../shared/http/request-id.js'
import type { GatewayPolicy, ProxySettings } from '../shared/config/settings.js'
import { readGatewayRequest } from './gateway-request.js'
import type { KeyVerifier } from './key-verifier.js'
import { clientResponseHeaders, upstreamRequestHeaders } from './proxy-headers.js'
import { createProxyMetrics, type AnswerSource } from './proxy-metrics.js'
import { gatewayAnswer, refusalMessage, unavailable, type GatewayCode } from './verdict-status.js'

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

export interface ReverseProxy {
  server: Server
  close(): Promise<void>
}

/**
 * Reverse-proxy mode: every request whose key verifies is forwarded to the upstream through one bounded
 * undici Pool, method, path, query, headers and body streamed as they come; anything else is answered like
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
    error: ApiError | { statusCode: number; code: GatewayCode; message: string },
    headers: Record<string, string> = {},
  ): void {
    metrics.answered(error.statusCode, 'keygate')
    if (res.headersSent) {
      res.destroy()
      return
    }
    const body = JSON.stringify(errorBody<string>(error, requestId, options.docsBaseUrl))
    res.writeHead(error.statusCode, {
      ...(error instanceof ApiError ? error.headers : undefined),
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
    })
    res.end(body)
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now()
    let source: AnswerSource = 'keygate'
    const requestId = requestIdOf(req)
    // Clients talk to the proxy directly: their X-Keygate-* headers never choose the policy.
    const check = readGatewayRequest(req.headers, policy, false)
    // A client that leaves (while its key is checked, or before or during the response) cancels the upstream
    // request and frees its connection. undici takes an EventEmitter as the signal: an AbortController would
    // build a DOMException (with a stack) for every request, and stream.pipeline makes one per request too —
    // together ~60 us, more than the rest.
    const departed = new EventEmitter()
    let gone = false
    // One listener for both ends: a response sent in full is timed; one cut short aborts the upstream request.
    res.on('close', () => {
      if (res.writableFinished) return metrics.finished(res.statusCode, source, (performance.now() - started) / 1000)
      gone = true
      departed.emit('abort')
    })
    let verdict
    try {
      verdict = check.key === undefined ? undefined : await verifier.verify(check.key, check.request)
    } catch (err) {
      if (err instanceof StoreUnavailableError) return fail(res, requestId, unavailable())
      throw err
    }
    const answer = gatewayAnswer(verdict ?? { code: 'MISSING_KEY' }, verifier.now())
    if (answer.code !== 'VALID') {
      req.resume()
      const message = refusalMessage(answer.code, policy.keyHeader, check.keyFrom)
      return fail(res, requestId, { statusCode: answer.status, code: answer.code, message }, answer.headers)
    }
    // Never so (a VALID verdict names its key: shared/verification.ts); a bug answers 500, never forwards.
    if (verdict?.keyId === undefined) throw new Error('a VALID verdict without a key id')

    // Origin-form targets only (`OPTIONS *` and absolute URLs are not ours to pass on).
    if (!req.url?.startsWith('/')) {
      req.resume()
      return fail(res, requestId, new ApiError('BAD_REQUEST', 'the request target must be a path starting with /'))
    }
    const hasBody =
      req.headers['content-length'] !== undefined
        ? req.headers['content-length'] !== '0'
        : req.headers['transfer-encoding'] !== undefined
    // Gone while its key was checked: nothing to forward.
    if (gone) return
    let upstream: Dispatcher.ResponseData
    try {
      upstream = await pool.request({
        method: req.method as 'GET',
        path: req.url,
        signal: departed,
        headers: upstreamRequestHeaders(req.headers, {
          keyId: verdict.keyId,
          ownerId: verdict.ownerId,
          requestId,
          clientAddress: req.socket.remoteAddress,
          keyHeader: policy.keyHeader,
          keyInAuthorization: check.keyFrom === 'authorization',
        }),
        body: hasBody ? req : undefined,
      })
    } catch (err) {
      if (gone) return
      req.resume()
      fail(res, requestId, upstreamError(err))
      if (!(err instanceof undiciErrors.UndiciError)) log.warn({ err, requestId }, 'proxy request failed')
      return
    }
    const body = upstream.body
    // The upstream failing mid-body ends the client's response; the client leaving aborts the upstream request
    // (the signal covers the body too); a client already gone, or a response we cannot write, frees it at once.
    body.on('error', () => res.destroy())
    if (gone) {
      body.destroy()
      return
    }
    try {
      res.writeHead(upstream.statusCode, { ...clientResponseHeaders(upstream.headers), 'x-request-id': requestId })
    } catch (err) {
      body.destroy()
      log.warn({ err, requestId }, 'upstream response headers could not be passed on')
      fail(res, requestId, new ApiError('BAD_GATEWAY', 'the upstream answered with headers that cannot be passed on'))
      return
    }
    source = 'upstream'
    metrics.answered(upstream.statusCode, source)
    body.pipe(res)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'proxy handler failed')
      fail(res, requestIdOf(req), new ApiError('INTERNAL_SERVER_ERROR', 'internal error'))
    })
  })
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

/** Why the upstream could not answer, as the contract's 502 or 504 (or 400 for what undici refuses to send). */
function upstreamError(err: unknown): ApiError {
  if (err instanceof undiciErrors.InvalidArgumentError || err instanceof undiciErrors.NotSupportedError) {
    return new ApiError('BAD_REQUEST', `the request cannot be forwarded: ${err.message}`)
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
