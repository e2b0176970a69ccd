import { parseCookie, stringifySetCookie } from 'cookie'
import type { TLSSocket } from 'node:tls'
import type { RouteRequest } from '../../../shared/http/route.js'

/** The cookie that carries a portal session's token (Unkey's name). */
export const PORTAL_COOKIE = 'portal_session'

/** The token a request's cookie carries, or undefined. */
export function portalTokenOf(request: RouteRequest): string | undefined {
  const header = request.headers.cookie
  if (!header) return undefined
  const token = parseCookie(header)[PORTAL_COOKIE]
  return token === undefined || token === '' ? undefined : token
}

/**
 * Whether the cookie is Secure (sent over https only): when customers reach the portal over https, as PORTAL_URL says,
 * or the request itself came over https. Keygate terminates no TLS and trusts no forwarded scheme, so behind a proxy
 * the request alone always reads http: PORTAL_URL is what knows.
 */
function secure(request: RouteRequest, portalUrl: string): boolean {
  return (request.raw.socket as Partial<TLSSocket>).encrypted === true || new URL(portalUrl).protocol === 'https:'
}

/**
 * The Set-Cookie of a session's token: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
 * Secure when the portal is served over https, for the whole origin, until the token expires.
 */
export function sessionCookie(
  request: RouteRequest,
  portalUrl: string,
  token: string,
  expiresAt: number,
  nowMs: number,
): string {
  return stringifySetCookie({
    name: PORTAL_COOKIE,
    value: token,
    httpOnly: true,
    sameSite: 'strict',
    secure: secure(request, portalUrl),
    path: '/',
    maxAge: Math.max(0, Math.floor((expiresAt - nowMs) / 1000)),
  })
}

/** The Set-Cookie that removes the session's cookie (sign-out). */
export function clearedCookie(request: RouteRequest, portalUrl: string): string {
  return stringifySetCookie({
    name: PORTAL_COOKIE,
    value: '',
    httpOnly: true,
    sameSite: 'strict',
    secure: secure(request, portalUrl),
    path: '/',
    maxAge: 0,
  })
}
