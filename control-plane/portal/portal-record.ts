import type { Refill } from '../../shared/keys/credits.js'
import type { NamedRateLimit } from '../../shared/identity.js'

/** Settings every key created through a portal gets: the operator's, never the browser's. */
export interface PortalKeyDefaults {
  /** Starts every key (`sk` gives `sk_…`). */
  prefix?: string
  /** Random bytes in each key. */
  byteLength?: number
  /** Credits each new key starts with, and how they refill. */
  credits?: { remaining: number; refill?: Refill; lowThreshold?: number }
  ratelimits?: NamedRateLimit[]
  /** Each key expires this long after it is made, ms. */
  expiresInMs?: number
}

/** What a portal allows when it does not say. */
export const DEFAULT_MAX_KEYS_PER_IDENTITY = 20

/** A portal as stored (an entity `portal:<id>`, unique by slug). */
export interface PortalRecord {
  id: string
  /** `[a-z0-9-]{3,64}`: sessions name a portal by it or by its id. */
  slug: string
  /** The page's title. */
  name: string
  apiIds: string[]
  enabled: boolean
  /** An https URL of the logo the page shows. */
  logoUrl?: string
  /** `#rrggbb`: the page's accent colour. */
  accentColor?: string
  keyDefaults?: PortalKeyDefaults
  /** Keys one identity may hold in each of the portal's apis: the portal creates no more. */
  maxKeysPerIdentity: number
  createdAt: number
  updatedAt?: number
}
