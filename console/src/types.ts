/** Records as Keygate's v1 API answers them (API.md): only what the console reads. */

export interface Refill {
  interval: 'daily' | 'monthly'
  amount: number
  refillDay?: number
}

export interface RateLimit {
  limit: number
  duration: number
  async?: boolean
}

export interface NamedRateLimit extends RateLimit {
  name: string
  autoApply?: boolean
}

export interface Key {
  id: string
  start: string
  apiId: string
  name?: string
  ownerId?: string
  meta?: Record<string, unknown>
  createdAt: number
  updatedAt?: number
  expires?: number
  remaining?: number
  refill?: Refill
  ratelimit?: RateLimit
  ratelimits?: NamedRateLimit[]
  enabled: boolean
  environment?: string
  permissions?: string[]
  roles?: string[]
  identity?: { id: string; externalId: string; meta?: Record<string, unknown> }
  /** Set when the key was reported leaked (docs/leaked-keys.md). */
  leaked?: { at: number; url?: string; source?: string; reporter: string; action: 'notify' | 'disable' | 'delete' }
}

export interface KeyPage {
  keys: Key[]
  total: number
  cursor?: string
}

export interface AuditEntry {
  id: string
  at: number
  rootKeyId: string
  action: string
  apiId?: string
  keyId?: string
  before?: Record<string, unknown>
  after?: Record<string, unknown>
  context?: Record<string, unknown>
  requestId?: string
}

export interface Verifications {
  verifications: { time: number; success: number; rateLimited: number; usageExceeded: number }[]
}

/** A webhook endpoint as webhooks.listEndpoints and webhooks.getEndpoint answer: never its signing secret. */
export interface WebhookEndpoint {
  endpointId: string
  url: string
  description?: string
  /** The event types it receives; empty: every type. */
  eventTypes: string[]
  /** The apis it is scoped to: only events about them; empty: every api, and the events about none. */
  apiIds: string[]
  enabled: boolean
  createdAt: number
  updatedAt?: number
}
