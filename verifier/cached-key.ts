import type { KeyRecord } from '../shared/records.js'

/**
 * What a verifier keeps of a key: everything a verdict, a rate limit or a credit spend reads, nothing else
 * (`start`, `createdAt` and `updatedAt` are for management reads). It is the largest thing in a verifier's
 * memory, one per cached key, so it is built lean: a fixed-order literal of the fields every key has, optional
 * fields only when present, the api id shared between the keys of an api, and `hash` the very string the
 * cache is keyed by.
 */
export type CachedKey = Omit<KeyRecord, 'start' | 'createdAt' | 'updatedAt'>

// Api ids repeat across every key of an api: one string each, for as many apis as a verifier plausibly sees.
const MAX_SHARED_API_IDS = 10_000
const apiIds = new Map<string, string>()

function sharedApiId(apiId: string): string {
  const known = apiIds.get(apiId)
  if (known !== undefined) return known
  if (apiIds.size < MAX_SHARED_API_IDS) apiIds.set(apiId, apiId)
  return apiId
}

export function toCachedKey(record: CachedKey): CachedKey {
  const key: CachedKey = { id: record.id, hash: record.hash, apiId: sharedApiId(record.apiId), enabled: record.enabled, rev: record.rev }
  if (record.name !== undefined) key.name = record.name
  if (record.ownerId !== undefined) key.ownerId = record.ownerId
  if (record.meta !== undefined) key.meta = record.meta
  if (record.expires !== undefined) key.expires = record.expires
  if (record.remaining !== undefined) key.remaining = record.remaining
  if (record.refill !== undefined) key.refill = record.refill
  if (record.ratelimit !== undefined) key.ratelimit = record.ratelimit
  if (record.environment !== undefined) key.environment = record.environment
  if (record.permissions !== undefined) key.permissions = record.permissions
  if (record.roles !== undefined) key.roles = record.roles
  return key
}
