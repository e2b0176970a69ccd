import { entityAddress } from './entity.js'

/** A rate limit an identity (or a key) carries by name; verifyKey's `ratelimits[]` refer to it by that name. */
export interface NamedRateLimit {
  name: string
  limit: number
  /** Window length, ms. */
  duration: number
  /** Applied to every verification without being asked for by name. */
  autoApply?: boolean
}

/**
 * An identity: the user or organisation behind keys. Keys bind to it through their externalId (the key record's
 * `ownerId`), so it is stored under its externalId and a key finds it without holding its id.
 */
export interface IdentityRecord {
  id: string
  externalId: string
  meta?: Record<string, unknown>
  ratelimits?: NamedRateLimit[]
  createdAt: number
  updatedAt?: number
}

export const identityAddress = (externalId: string) => entityAddress('identity', externalId)
