import type { Verdict } from '../shared/verification.js'
import { headerSafe } from './proxy-headers.js'

export interface GatewayAnswer {
  status: 200 | 401 | 403 | 429
  headers: Record<string, string>
}

/**
 * A verdict as a gateway understands it — status and headers only — shared by forward-auth and the proxy:
 * 200 valid, 401 for no usable key, 403 for a key that may not do this, 429 for limits and credits. `now` (unix
 * ms) is the verifier's own clock, the one the limit's reset was computed with.
 */
export function gatewayAnswer(verdict: Verdict | undefined, now: number): GatewayAnswer {
  if (!verdict)
    return { status: 401, headers: { 'www-authenticate': 'Bearer realm="keygate"', 'x-keygate-code': 'MISSING_KEY' } }
  const headers: Record<string, string> = { 'x-keygate-code': verdict.code }
  if (verdict.keyId) headers['x-keygate-key-id'] = verdict.keyId
  switch (verdict.code) {
    case 'VALID':
      if (verdict.ownerId !== undefined) headers['x-keygate-owner-id'] = headerSafe(verdict.ownerId)
      if (verdict.remaining !== undefined) headers['x-keygate-remaining'] = String(verdict.remaining)
      return { status: 200, headers }
    case 'NOT_FOUND':
    case 'DISABLED':
    case 'EXPIRED':
      headers['www-authenticate'] = 'Bearer realm="keygate", error="invalid_token"'
      return { status: 401, headers }
    case 'FORBIDDEN':
    case 'INSUFFICIENT_PERMISSIONS':
      return { status: 403, headers }
    case 'RATE_LIMITED':
    case 'USAGE_EXCEEDED': {
      const limit = verdict.ratelimit
      const retryAfterS = limit ? Math.max(0, Math.ceil((limit.reset - now) / 1000)) : 60
      headers['retry-after'] = String(retryAfterS)
      if (limit) {
        headers['ratelimit-limit'] = String(limit.limit)
        headers['ratelimit-remaining'] = String(limit.remaining)
        headers['ratelimit-reset'] = String(retryAfterS)
      }
      return { status: 429, headers }
    }
  }
}
