import Fastify, { LogController, type FastifyBaseLogger } from 'fastify'
import { Gauge } from 'prom-client'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Logger } from 'pino'
import { ApiError } from '../errors/errors.js'
import { registerErrorPages } from './error-pages.js'
import { registerProbes } from './probe-routes.js'
import { clientErrorHandler, installErrorHandling, renderError, toApiError } from './error-handler.js'
import type { HttpMetrics } from './metrics-registry.js'
import { requestIdOf } from './request-id.js'
import { fastJsonPath, fastRouteServerFactory, type FastRouteContext } from './fast-route.js'
import type { AnyRoute } from './route.js'
import type { KeygateServer } from './keygate-server.js'
import { fastHeaderPath, type FastHeaderRoute } from './fast-header-route.js'
import { parseJsonBody } from './json-body.js'
import { schemaErrorFormatter, validatorCompiler } from './validation.js'

/** What every server is built with, whatever it serves. */
export interface ServerBase {
  log: Logger
  metrics: HttpMetrics
  bodyLimitBytes: number
  docsBaseUrl: string
}

export interface ServerOptions extends ServerBase {
  /** Whether each request is logged (the control plane) or only failures (the verifier's hot path). */
  logRequests: boolean
  /** Why the server cannot serve correctly now, or [] when it can. */
  notReadyReasons(): string[] | Promise<string[]>
  /**
   * Endpoints served ahead of Fastify on the server it listens with (fast-route.ts), as well as by their Fastify
   * routes (registered by the caller); inject() goes through Fastify.
   */
  fastRoutes?: AnyRoute[]
  /** A header-only route served ahead of Fastify too (fast-header-route.ts): forward-auth. */
  fastHeaderRoute?: FastHeaderRoute
  /** Said of a `/v1/…` or `/v2/…` operation this server does not serve, after the 404's own message. */
  unmatchedOperation?: string
  /** Registers a plugin that must see every route, the server's own included (the OpenAPI document). */
  documentation?: (app: KeygateServer) => void
}

const JSON_TYPE = /^application\/json\s*(;|$)/i
/** Longest a request may take to arrive in full (then 408). */
const REQUEST_TIMEOUT_MS = 30_000
const QUIET_PATHS = new Set(['/livez', '/readyz', '/metrics', '/v1/liveness'])

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes any content type and never needs its body (forward-auth). */
    anyBody?: boolean
  }
  interface FastifyInstance {
    /**
     * First step of a graceful shutdown: readiness turns false and new requests get a contract-shaped 503
     * (with `Connection: close`) while the requests in flight finish. close() does it too.
     */
    stopAccepting(): void
    /** Readiness turns false while requests are still served: load balancers move away before stopAccepting(). */
    beginDraining(): void
  }
}

/**
 * What every Keygate server shares: request ids, strict JSON, the contract's errors, 404/405, health
 * endpoints and metrics. Never listens: the caller adds routes and decides.
 */
export function buildServer(options: ServerOptions): KeygateServer {
  let closing = false
  let draining = false
  const routes = options.metrics.routes
  const fastPaths = () => {
    const context: FastRouteContext = {
      bodyLimitBytes: options.bodyLimitBytes,
      docsBaseUrl: options.docsBaseUrl,
      log: options.log,
      closing: () => closing,
      routes,
    }
    return [
      ...(options.fastRoutes ?? []).map((route) => fastJsonPath(route, context)),
      ...(options.fastHeaderRoute ? [fastHeaderPath(options.fastHeaderRoute, context)] : []),
    ]
  }
  const app = Fastify({
    loggerInstance: options.log,
    // Probes and scrapes every few seconds would drown the request log.
    logController: new LogController({
      disableRequestLogging: options.logRequests
        ? (request) => QUIET_PATHS.has(request.url.split('?', 1)[0] ?? '')
        : true,
      requestIdLogLabel: 'requestId',
    }),
    bodyLimit: options.bodyLimitBytes,
    // Fastify's default is no limit: a client trickling a body could hold a connection (and shutdown) forever.
    requestTimeout: REQUEST_TIMEOUT_MS,
    genReqId: requestIdOf,
    // A child logger per request (to bind its id) costs more than the verifier's whole verdict; without request
    // logging the server's own logger serves, and errors carry the request id explicitly (error-handler.ts).
    ...(options.logRequests ? {} : { childLoggerFactory: (logger: FastifyBaseLogger) => logger }),
    // Fastify's own closing answer is not in the contract's error shape: see `closing` below.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Proto-poisoned bodies are refused with a 400, never parsed.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    schemaErrorFormatter,
    // Errors Fastify raises before routing (a malformed URL) and the HTTP parser's: the contract's shape too.
    frameworkErrors: (error, request, reply) => {
      renderError(toApiError(error), request, reply, options.docsBaseUrl)
    },
    clientErrorHandler: clientErrorHandler(options.docsBaseUrl),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    ...(options.fastRoutes?.length || options.fastHeaderRoute
      ? { serverFactory: fastRouteServerFactory(fastPaths()) }
      : {}),
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  // Only JSON bodies: a POST of text/plain is a 415, not a string that fails validation.
  app.removeContentTypeParser(['text/plain'])
  // Fastify's own JSON parser answers every syntax error alike; this one says where (the fast route uses it too).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string))
    } catch (err) {
      done(err as Error, undefined)
    }
  })

  const unmatchedRoute = installErrorHandling(app, options.docsBaseUrl, options.unmatchedOperation)

  app.decorate('stopAccepting', () => {
    closing = true
  })
  app.decorate('beginDraining', () => {
    draining = true
  })
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    // routeOptions is a getter that builds a new object: read it once.
    const route = request.routeOptions
    // While draining, the process is still live (/livez) and says why it is not ready (/readyz).
    if (closing && request.url !== '/livez' && request.url !== '/readyz') {
      reply.header('connection', 'close')
      renderError(
        new ApiError('UNAVAILABLE', 'the server is shutting down; retry'),
        request,
        reply,
        options.docsBaseUrl,
      )
      return
    }
    // No route: answer 404/405 now, before the body is read (a broken body must not turn it into a 400).
    if (route.url === undefined) {
      renderError(unmatchedRoute(request), request, reply, options.docsBaseUrl)
      return
    }
    // Writes are JSON, also when empty: a POST without a JSON content type is a 415 before anything else.
    if (request.method === 'POST' && !route.config.anyBody && !JSON_TYPE.test(request.headers['content-type'] ?? '')) {
      done(new ApiError('UNSUPPORTED_MEDIA_TYPE', 'content-type: must be application/json'))
      return
    }
    done()
  })
  // A request that was in flight when shutdown began must not leave its keep-alive connection behind to
  // linger (and hold up close) until the keep-alive timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onResponse', (request, reply, done) => {
    routes.observe(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  const notReadyReasons = async () => (closing || draining ? ['shutting down'] : await options.notReadyReasons())
  // Computed at scrape time as /readyz computes it: dashboards and alerts see what the probe sees.
  new Gauge({
    name: 'keygate_ready',
    help: '1 when GET /readyz would answer 200, else 0',
    registers: [options.metrics.registry],
    async collect() {
      this.set((await notReadyReasons()).length === 0 ? 1 : 0)
    },
  })

  // A plugin that must see every route (the OpenAPI document) is registered before the server's own routes.
  options.documentation?.(app)
  app.register(async (scope: KeygateServer) => {
    registerErrorPages(scope, options.docsBaseUrl)
    registerProbes(scope, { notReadyReasons, registry: options.metrics.registry, docsBaseUrl: options.docsBaseUrl })
  })
  return app
}
