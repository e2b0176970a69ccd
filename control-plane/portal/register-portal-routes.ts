import type { FastifyReply, FastifyRequest } from 'fastify'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { V2Envelope, V2PagedEnvelope } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { clearedCookie, sessionCookie } from './portal-cookie.js'
import { portalCallerOf, refuseCrossSite } from './portal-session-auth.js'
import type { PortalSessionRoute } from './portal-session-route.js'

/** Portal answers carry secrets (codes, tokens, keys) or a customer's data: no cache keeps them. */
export function noStore(app: KeygateServer): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/v2/portal.'))
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
  })
}

/**
 * Serves the routes the customer's browser calls. The session is authenticated before the body is read (a request
 * without a valid cookie is a 401 whatever it sends), every call is refused from other sites, and answers are never
 * cached. The adapter's cookie change is applied here, the one place that knows the cookie's attributes.
 */
export function registerPortalSessionRoutes(
  app: KeygateServer,
  deps: ControlPlaneDeps,
  routes: readonly PortalSessionRoute[],
): void {
  const callers = new WeakMap<FastifyRequest, PortalCaller>()
  noStore(app)
  for (const route of routes) {
    app.route({
      method: 'POST',
      url: `/v2/${route.operation}`,
      schema: {
        body: route.body,
        response: { 200: route.paged ? V2PagedEnvelope(route.data) : V2Envelope(route.data) },
      },
      onRequest: async (request) => {
        if (route.session) callers.set(request, await portalCallerOf(request, deps))
        else refuseCrossSite(request, deps.portalUrl)
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const { cookie, ...answer } = await route.handle(request.body, callers.get(request), deps)
        if (cookie === 'clear') void reply.header('set-cookie', clearedCookie(request, deps.portalUrl))
        else if (cookie) {
          const { token, expiresAt } = cookie
          void reply.header('set-cookie', sessionCookie(request, deps.portalUrl, token, expiresAt, deps.clock.now()))
        }
        return { meta: { requestId: request.id }, ...answer }
      },
    })
  }
}
