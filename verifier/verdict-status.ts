import { ApiError } from '../shared/errors/errors.js'
import { GATEWAY_CODES, type GatewayCode, type GatewayRefusalCode } from '../shared/errors/gateway-codes.js'
import type { Verdict } from '../shared/verification/verification.js'
import { headerSafe } from './proxy-headers.js'

/**
 * What a gateway is answered on: a verdict, or no verdict because the request carried no key (MISSING_KEY) or
 * named no api while the verifier is bound to none (API_ID_REQUIRED).
 */
export type GatewayOutcome = Verdict | { code: 'MISSING_KEY' | 'API_ID_REQUIRED' }

export interface GatewayAnswer {
  code: GatewayCode
  status: (typeof GATEWAY_CODES)[GatewayCode]
  headers: Record<string, string>
}

/**
 * An outcome as a gateway understands it — status and headers only — shared by forward-auth and the proxy:
 * 200 valid, 401 for no usable key, 403 for a key that may not do this (or no api to check it against), 429
 * for limits and credits. `now` (unix ms) is the verifier's own clock, the one the limit's reset was computed
 * with.
 */
export function gatewayAnswer(outcome: GatewayOutcome, now: number): GatewayAnswer {
  const { code } = outcome
  const verdict = 'valid' in outcome ? outcome : undefined
  const headers: Record<string, string> = { 'x-keygate-code': code }
  if (verdict?.keyId) headers['x-keygate-key-id'] = verdict.keyId
  switch (code) {
    case 'VALID':
      if (verdict?.ownerId !== undefined) headers['x-keygate-owner-id'] = headerSafe(verdict.ownerId)
      if (verdict?.remaining !== undefined) headers['x-keygate-remaining'] = String(verdict.remaining)
      break
    case 'MISSING_KEY':
      headers['www-authenticate'] = 'Bearer realm="keygate"'
      break
    case 'NOT_FOUND':
    case 'DISABLED':
    case 'EXPIRED':
      headers['www-authenticate'] = 'Bearer realm="keygate", error="invalid_token"'
      break
    case 'RATE_LIMITED':
    case 'USAGE_EXCEEDED': {
      const limit = verdict?.ratelimit
      const retryAfterS = limit ? Math.max(0, Math.ceil((limit.reset - now) / 1000)) : 60
      headers['retry-after'] = String(retryAfterS)
      if (limit) {
        headers['ratelimit-limit'] = String(limit.limit)
        headers['ratelimit-remaining'] = String(limit.remaining)
        headers['ratelimit-reset'] = String(retryAfterS)
      }
      break
    }
  }
  return { code, status: GATEWAY_CODES[code], headers }
}

/**
 * What a refusal says to a person reading it: where the key was looked for (or found), and what to change.
 * `keyHeader` is the header the verifier reads keys from; `keyFrom` where this request's key was.
 */
export function refusalMessage(
  code: GatewayRefusalCode,
  keyHeader: string,
  keyFrom: 'header' | 'authorization' | undefined,
): string {
  const sent =
    keyFrom === 'authorization' ? 'the key sent as Authorization: Bearer' : `the key in the ${keyHeader} header`
  switch (code) {
    case 'MISSING_KEY':
      return `no API key: send it in the ${keyHeader} header, or as Authorization: Bearer <key>`
    case 'NOT_FOUND':
      return `${sent} is not a key`
    case 'DISABLED':
      return `${sent} is disabled`
    case 'EXPIRED':
      return `${sent} has expired`
    case 'FORBIDDEN':
      return `${sent} may not be used here: it belongs to another api, or this request's address is outside its IP allow-list`
    case 'INSUFFICIENT_PERMISSIONS':
      return `${sent} lacks a permission this request needs`
    case 'API_ID_REQUIRED':
      return 'the verifier was not told which api keys must belong to: the gateway sets X-Keygate-Api-Id, or the verifier runs with --api-id (or --any-api)'
    case 'RATE_LIMITED':
      return `${sent} is over its rate limit: retry after Retry-After seconds`
    case 'USAGE_EXCEEDED':
      return `${sent} has no credits left`
  }
}

/**
 * Failing closed (the store unreachable beyond the bound): the contract's 503, its code in X-Keygate-Code too. `cause`:
 * the store's failure, which the 503's log line names (shared/http/unavailable-log.ts).
 */
export const unavailable = (cause: unknown) =>
  new ApiError(
    'UNAVAILABLE',
    'keys cannot be checked right now; retry',
    { 'x-keygate-code': 'UNAVAILABLE' },
    undefined,
    { cause },
  )
