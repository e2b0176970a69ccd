/** What the portal's session API answers (the contract of /v2/portal.*): only what the page reads. */

export type Scope = 'keys:read' | 'keys:create' | 'keys:reroll' | 'keys:revoke' | 'analytics:read'

export interface Session {
  sessionId: string
  externalId: string
  scopes: string[]
  expiresAt: number
  returnUrl?: string
  preview: boolean
  portal: { name: string; logoUrl?: string; accentColor?: string }
  apis: { id: string; name: string }[]
}

/** A key as v2 shows it. */
export interface PortalKey {
  keyId: string
  start: string
  name?: string
  createdAt: number
  updatedAt?: number
  expires?: number
  enabled: boolean
  credits?: { remaining: number | null; refill?: { interval: string; amount: number } }
  lastUsedAt?: number
}

/** A key the server made, shown once. */
export interface NewKey {
  keyId: string
  key: string
}

/** One bucket of portal.getVerifications: counts by outcome. */
export interface UsageBucket {
  time: number
  total: number
  valid: number
  rateLimited: number
  insufficientPermissions: number
  forbidden: number
  disabled: number
  expired: number
  usageExceeded: number
}
