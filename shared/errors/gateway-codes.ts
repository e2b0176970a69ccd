import type { VerdictCode } from '../verification/verification.js'

/**
 * Every X-Keygate-Code a gateway (or a client of the reverse proxy) can see, with its status: the verdicts, and the two
 * answers given without one. The proxy's error body carries the same code (docs/gateways.md, "Forward-auth"), and
 * links to its page (error-docs.ts).
 */
export const GATEWAY_CODES = {
  VALID: 200,
  MISSING_KEY: 401,
  NOT_FOUND: 401,
  DISABLED: 401,
  EXPIRED: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_PERMISSIONS: 403,
  API_ID_REQUIRED: 403,
  RATE_LIMITED: 429,
  USAGE_EXCEEDED: 429,
} as const satisfies Record<VerdictCode | 'MISSING_KEY' | 'API_ID_REQUIRED', number>

export type GatewayCode = keyof typeof GATEWAY_CODES

/** The codes a gateway refuses with: each is an error body's code on the proxy and on /v1/authorize. */
export type GatewayRefusalCode = Exclude<GatewayCode, 'VALID'>
