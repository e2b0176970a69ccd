import { entityAddress } from './entity.js'

/** A rate limit an identity (or a key) carries by name; verifyKey's `ratelimits[]` refer to it by that name. */
export interface NamedRateLimit {
  name: string
  limit: number
  /** Window length, ms. */
  duration: number
  /** Applied to every verification without being asked for by name. */
  autoApply?: boolean
  /** Counted by each verifier and reconciled (true), or exactly in the store (false, the default: Unkey's). */
  async?: boolean
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

/** The unique-name scope of the pointers from an identity's id to its externalId (where its record is). */
export const IDENTITY_ID_SCOPE = 'identity-id'
/** The index every identity's id is listed in. */
export const IDENTITY_INDEX = 'identity'
