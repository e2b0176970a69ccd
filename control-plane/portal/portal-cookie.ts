import { parseCookie, stringifySetCookie } from 'cookie'
import type { FastifyRequest } from 'fastify'

/** The cookie that carries a portal session's token (Unkey's name). */
export const PORTAL_COOKIE = 'portal_session'

/** The token a request's cookie carries, or undefined. */
export function portalTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie
  if (!header) return undefined
  const token = parseCookie(header)[PORTAL_COOKIE]
  return token === undefined || token === '' ? undefined : token
}

/**
 * The Set-Cookie of a session's token: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
 * Secure when the request came over https (behind a proxy: `X-Forwarded-Proto` when the proxy is trusted), for the
 * whole origin, until the token expires.
 */
export function sessionCookie(request: FastifyRequest, token: string, expiresAt: number, nowMs: number): string {
  return stringifySetCookie({
    name: PORTAL_COOKIE,
    value: token,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    path: '/',
    maxAge: Math.max(0, Math.floor((expiresAt - nowMs) / 1000)),
  })
}

/** The Set-Cookie that removes the session's cookie (sign-out). */
export function clearedCookie(request: FastifyRequest): string {
  return stringifySetCookie({
    name: PORTAL_COOKIE,
    value: '',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    path: '/',
    maxAge: 0,
  })
}
