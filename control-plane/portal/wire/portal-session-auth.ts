import type { RouteRequest } from '../../../shared/http/route.js'
import { ApiError } from '../../../shared/errors/errors.js'
import { portalDisabled, sessionNotValid } from '../portal-errors.js'
import { hashKey } from '../../../shared/keys/key-material.js'
import type { PortalSession } from '../../../shared/portal/portal.js'
import { BOOTSTRAP_ID } from '../../../shared/root-keys/root-key-principal.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from '../session/portal-caller.js'
import { portalTokenOf } from './portal-cookie.js'

/** No session cookie (Unkey's `portal_token_missing`). */
const tokenMissing = () =>
  new ApiError('UNAUTHORIZED', 'The portal session cookie is missing.', undefined, {
    problem: 'authentication/portal_token_missing',
    credential: { kind: 'portal-session', refused: 'missing' },
  })

/**
 * Refuses a request another site's page made: the browser says so in `Sec-Fetch-Site`, and in `Origin`, which names
 * neither the portal's origin (PORTAL_URL: where customers reach the page, whatever Host a proxy in front sends) nor
 * the host the request was sent to. The session cookie is SameSite=Strict and portal calls must be JSON (a form cannot
 * send that): this third check also stops a sibling subdomain (same-site, so it gets the cookie).
 */
export function refuseCrossSite(request: RouteRequest, portalUrl: string): void {
  const site = request.headers['sec-fetch-site']
  const origin = request.headers.origin
  const crossSite =
    (site !== undefined && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && !isPortalOrigin(origin, portalUrl) && !sameHost(origin, request.headers.host))
  if (crossSite) throw new ApiError('INSUFFICIENT_PERMISSIONS', 'portal calls are refused from other sites')
}

/** Whether `origin` is the portal page's own (scheme, host and port of PORTAL_URL). */
function isPortalOrigin(origin: string, portalUrl: string): boolean {
  try {
    return new URL(origin).origin === new URL(portalUrl).origin
  } catch {
    return false
  }
}

/** Whether `origin` names the host the request was sent to (a default port said or not). */
function sameHost(origin: string, host: string | undefined): boolean {
  try {
    const from = new URL(origin)
    return host !== undefined && from.host === new URL(`${from.protocol}//${host}`).host
  } catch {
    return false
  }
}

/**
 * Whether the root key that minted a session still authenticates: the session acts with its authority, so it ends
 * when that root key is revoked or rolled (the operator's answer to a leaked root key must reach the sessions minted
 * with it, which it cannot list), or, for KEYGATE_ROOT_KEY, turned off.
 */
async function minterIsLive(deps: Pick<ControlPlaneDeps, 'store'>, session: PortalSession): Promise<boolean> {
  if (session.mintedBy === BOOTSTRAP_ID) return !(await deps.store.rootKeys.isBootstrapRootKeyDisabled())
  return (await deps.store.rootKeys.getRootKeyById(session.mintedBy)) !== null
}

/**
 * The caller of a portal route: the session the `portal_session` cookie names, live, minted by a root key that still
 * authenticates, of a portal that is still there and enabled. Only the cookie authenticates: a request carrying an
 * `Authorization` header is refused (a root key is no portal session, and a portal route never acts with one).
 */
export async function portalCallerOf(request: RouteRequest, deps: ControlPlaneDeps): Promise<PortalCaller> {
  refuseCrossSite(request, deps.portalUrl)
  if (request.headers.authorization !== undefined) {
    throw new ApiError(
      'UNAUTHORIZED',
      'portal calls take the portal_session cookie, never an Authorization header',
      undefined,
      {
        problem: 'authentication/portal_token_missing',
        credential: { kind: 'portal-session', refused: 'missing' },
      },
    )
  }
  const token = portalTokenOf(request)
  if (token === undefined) throw tokenMissing()
  const now = deps.clock.now()
  const session = await deps.store.portalSessions.sessionOfToken(hashKey(token), now)
  if (!session) throw sessionNotValid()
  const [portal, minterLive] = await Promise.all([deps.portals.get(session.portalId), minterIsLive(deps, session)])
  if (!portal || !minterLive) throw sessionNotValid()
  if (!portal.enabled) throw portalDisabled()
  return {
    session,
    portal,
    requestId: request.id,
    log: request.log.child({ portalSessionId: session.id }),
  }
}
