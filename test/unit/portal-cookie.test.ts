import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import { capturedLogger } from '../support/apps.js'
import { clearedCookie, sessionCookie } from '../../control-plane/portal/wire/portal-cookie.js'
import type { RouteRequest } from '../../shared/http/route.js'

/** A request that came over a socket: a TLS socket says it is `encrypted`, a plain one has no such property. */
const over = (socket: object): RouteRequest => ({
  id: 'req_cookie',
  headers: {},
  raw: { socket } as IncomingMessage,
  log: capturedLogger().log,
})

const SECURE = /; Secure(;|$)/
const HOUR = 3_600_000

/**
 * The session cookie is Secure when the portal's own URL is https (behind a proxy) or when the request itself came
 * over TLS: either says the browser reached the portal over https. The integration tests reach the control plane
 * over plain http only, so the second half is pinned here.
 */
describe("the portal session cookie's Secure attribute", () => {
  it('is set for a request that came over TLS, whatever PORTAL_URL says', () => {
    const tls = over({ encrypted: true })
    expect(sessionCookie(tls, 'http://localhost:7070/portal', 'pat_x', HOUR, 0)).toMatch(SECURE)
    expect(clearedCookie(tls, 'http://localhost:7070/portal')).toMatch(SECURE)
  })

  it('is set for a plain request when PORTAL_URL is https', () => {
    const plain = over({})
    expect(sessionCookie(plain, 'https://portal.example.com', 'pat_x', HOUR, 0)).toMatch(SECURE)
    expect(clearedCookie(plain, 'https://portal.example.com')).toMatch(SECURE)
  })

  it('is not set for a plain request to an http portal', () => {
    const plain = over({})
    expect(sessionCookie(plain, 'http://localhost:7070/portal', 'pat_x', HOUR, 0)).not.toMatch(SECURE)
    expect(clearedCookie(plain, 'http://localhost:7070/portal')).not.toMatch(SECURE)
  })
})
