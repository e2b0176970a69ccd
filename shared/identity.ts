import { entityAddress } from './entity.js'
import type { NamedRateLimit } from './ui-shapes.js'
import type { UsageThreshold } from './usage-threshold.js'

export type { NamedRateLimit }

/**
 * An identity: the user or organisation behind keys. Keys bind to it through their externalId (the key record's
 * `ownerId`), so it is stored under its externalId and a key finds it without holding its id.
 */
export interface IdentityRecord {
  id: string
  externalId: string
  meta?: Record<string, unknown>
  ratelimits?: NamedRateLimit[]
  /** Its usage thresholds (shared/usage-threshold.ts), never empty; absent: none. */
  usageThresholds?: UsageThreshold[]
  createdAt: number
  updatedAt?: number
}

export const identityAddress = (externalId: string) => entityAddress('identity', externalId)

/** The unique-name scope of the pointers from an identity's id to its externalId (where its record is). */
export const IDENTITY_ID_SCOPE = 'identity-id'
/** The index every identity's id is listed in. */
export const IDENTITY_INDEX = 'identity'
