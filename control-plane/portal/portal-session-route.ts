import type { Static, TSchema } from 'typebox'
import type { V2Answer } from '../../shared/http/v2-route.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { RouteDoc } from '../management-route.js'
import type { PortalCaller } from './portal-caller.js'

/** What a portal route asks of the session cookie beside its answer: set it (a new token), or clear it. */
export type CookieChange = { token: string; expiresAt: number } | 'clear'

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
  ) => Promise<V2Answer<Static<Data>> & { cookie?: CookieChange }>
}

/** Declares a route typed by its schemas (the list of routes holds them untyped). */
export function portalSessionRoute<Body extends TSchema, Data extends TSchema>(
  route: PortalSessionRoute<Body, Data>,
): PortalSessionRoute {
  return route as unknown as PortalSessionRoute
}
