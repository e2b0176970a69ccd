import type { Static, TSchema } from 'typebox'
import type { AnyRoute, Route, RouteRequest } from '../../../shared/http/route.js'
import { V2Envelope, V2PagedEnvelope, type V2Answer } from '../../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { RouteDoc } from '../../http/management-route.js'
import type { PortalCaller } from '../session/portal-caller.js'
import { clearedCookie, sessionCookie } from './portal-cookie.js'
import { portalCallerOf, refuseCrossSite } from './portal-session-auth.js'

/** What a portal route asks of the session cookie beside its answer: set it (a new token), or clear it. */
export type CookieChange = { token: string; expiresAt: number } | 'clear'

/** A portal adapter's answer: v2's `data` (and a list's `pagination`), and the cookie to set or clear. */
export type PortalAnswer<Data> = V2Answer<Data> & { cookie?: CookieChange }

/**
 * One portal route the customer's browser calls (`POST /v2/portal.<method>`, Unkey's v2 wire): authenticated by the
 * session cookie (`session: true`) or by nothing (exchangeCode, whose code is the proof). Its adapter gets the body its
 * schema checked and the caller, and answers v2's `data` (and a list's `pagination`), and the cookie to set or clear.
 */
export interface PortalSessionRoute<Body extends TSchema = TSchema, Data extends TSchema = TSchema> {
  /** `portal.listKeys`: served at `/v2/portal.listKeys`, documented as `v2.portal.listKeys`. */
  operation: string
  doc: RouteDoc
  body: Body
  data: Data
  paged?: boolean
  session: boolean
  handle: (
    body: Static<Body>,
    caller: PortalCaller | undefined,
    deps: ControlPlaneDeps,
  ) => Promise<PortalAnswer<Static<Data>>>
}

/**
 * Declares a route typed by its schemas: the list of routes holds them untyped, the route itself keeps its types (a
 * check that the portal page's shapes are the wire's reads them).
 */
export function portalSessionRoute<Body extends TSchema, Data extends TSchema>(
  route: PortalSessionRoute<Body, Data>,
): PortalSessionRoute<Body, Data> {
  return route
}

/**
 * A portal adapter as a route (shared/http/route.ts): the session is authenticated before the body is read (a
 * request without a valid cookie is a 401 whatever it sends), every call is refused from other sites, and the
 * adapter's cookie change becomes the answer's Set-Cookie here, the one place that knows the cookie's attributes.
 */
export function portalRoute(adapter: PortalSessionRoute): Route<ControlPlaneDeps, PortalCaller | undefined> {
  return {
    id: `v2.${adapter.operation}`,
    method: 'POST',
    url: `/v2/${adapter.operation}`,
    doc: { ...adapter.doc, rootKey: false },
    input: adapter.body,
    response: adapter.paged ? V2PagedEnvelope(adapter.data) : V2Envelope(adapter.data),
    authenticate: adapter.session
      ? (request, deps) => portalCallerOf(request, deps)
      : (request, deps) => void refuseCrossSite(request, deps.portalUrl),
    handle: (body: unknown, caller, deps) => adapter.handle(body, caller, deps),
    headersOf: (answer: PortalAnswer<unknown>, request: RouteRequest, deps) => {
      const { cookie } = answer
      if (cookie === undefined) return undefined
      if (cookie === 'clear') return { 'set-cookie': clearedCookie(request, deps.portalUrl) }
      return { 'set-cookie': sessionCookie(request, deps.portalUrl, cookie.token, cookie.expiresAt, deps.clock.now()) }
    },
  }
}

/** Every portal adapter of `adapters` as a route. */
export const portalRoutes = (adapters: readonly PortalSessionRoute[]): AnyRoute<ControlPlaneDeps>[] =>
  adapters.map(portalRoute)
