import type { LeakMark, PortalScope, UsageThreshold } from './ui-shapes.js'

/**
 * What each call of the customer portal's session API (`POST /v2/portal.<method>`) answers as its `data`, declared
 * once for the portal's page to read (`npm run build` copies this file and ui-shapes.ts into portal/src/generated/).
 * test/unit/ui-answers.test.ts holds every one to its route's schema, so a field the wire gains and this file lacks
 * fails the type-check.
 */
export interface PortalAnswers {
  exchangeCode: { accessToken: string; expiresAt: number }
  getSession: PortalSession
  listKeys: PortalKey[]
  createKey: NewPortalKey
  rerollKey: NewPortalKey
  /** An empty object. */
  revokeKey: object
  getVerifications: UsageBucket[]
  getUsageThresholds: PortalThreshold[]
  signOut: object
}

/** One of the customer's usage thresholds, with its usage in the current period (portal.getUsageThresholds). */
export interface PortalThreshold extends UsageThreshold {
  /** The usage counted so far in the current period. */
  usage: number
  /** The current period, Unix ms: its start (inclusive) and end (exclusive), UTC. */
  start: number
  end: number
}

export type PortalMethod = keyof PortalAnswers

/** v2's envelope of every answer: the request's id, the data, and for a list where the page ended. */
export interface PortalAnswer<Data> {
  meta: { requestId: string }
  data: Data
  pagination?: { cursor?: string; hasMore: boolean }
}

export interface PortalSession {
  sessionId: string
  externalId: string
  scopes: PortalScope[]
  expiresAt: number
  /** Where the page's "Back" link goes. */
  returnUrl?: string
  /** A session for trying the portal out. */
  preview: boolean
  portal: { name: string; logoUrl?: string; accentColor?: string }
  apis: { id: string; name: string }[]
}

/** A named rate limit as v2 shows it: `id` derived from its owner and name. */
interface PortalRatelimit {
  id: string
  name: string
  limit: number
  duration: number
  autoApply: boolean
}

/** A key of the customer's, as v2 shows a key (never its hash), with its api and when it was last used. */
export interface PortalKey {
  keyId: string
  start: string
  enabled: boolean
  name?: string
  meta?: Record<string, unknown>
  createdAt: number
  updatedAt?: number
  expires?: number
  permissions?: string[]
  roles?: string[]
  /** remaining null: no credits, no limit. */
  credits?: {
    remaining: number | null
    refill?: { interval: 'daily' | 'monthly'; amount: number; refillDay?: number }
    lowThreshold?: number
  }
  identity?: {
    id: string
    externalId: string
    meta?: Record<string, unknown>
    ratelimits?: PortalRatelimit[]
  }
  ratelimits?: PortalRatelimit[]
  leaked?: LeakMark
  ipAllowlist?: string[]
  usageThresholds?: UsageThreshold[]
  apiId: string
  /** The start of the last hour it was verified in. */
  lastUsedAt?: number
}

/** A key the server made, shown once. */
export interface NewPortalKey {
  keyId: string
  key: string
}

/** One bucket of getVerifications: counts by outcome, and the credits spent. */
export interface UsageBucket {
  time: number
  /** The key, when asked per key. */
  keyId?: string
  total: number
  valid: number
  rateLimited: number
  insufficientPermissions: number
  forbidden: number
  disabled: number
  expired: number
  usageExceeded: number
  spentCredits: number
}
