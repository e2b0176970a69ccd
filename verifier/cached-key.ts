import type { KeyContext } from '../shared/keys/key-context.js'
import type { KeyRecord } from '../shared/keys/records.js'
import type { Verdict } from '../shared/verification/verification.js'

/**
 * What a verifier keeps of a key: everything a verdict, a rate limit or a credit spend reads, nothing else
 * (`start`, `createdAt`, `updatedAt`, `rerolledFrom`, `replacedBy` and `leaked` are for management reads and
 * events). It is the largest
 * thing in a verifier's memory, one per cached key, so it is built lean: a fixed-order literal of the fields every
 * key has, optional fields only when present, the api id shared between the keys of an api, and `hash` the very
 * string the cache is keyed by.
 */
export interface CachedKey extends Omit<
  KeyRecord,
  'start' | 'createdAt' | 'updatedAt' | 'rerolledFrom' | 'replacedBy' | 'leaked' | 'usageThresholds'
> {
  /**
   * What the key was granted when last verified (its roles' and permissions' names, its identity), and the entity
   * cache generation it was resolved at: reused until any entity changes (key-verifier.ts).
   */
  resolved?: { generation: number; context: KeyContext }
  /**
   * The last verdict of a plain request (no permissions, limits or costs named; an api or not), frozen, with what
   * it was decided on: reused while the context, the api asked about, expiry and whether the client's address was
   * allowed are the same, so that an unchanged
   * key answers the same object every time (and is serialised once: shared/http/fast-route.ts).
   */
  verdict?: {
    context: KeyContext
    apiId: string | undefined
    expired: boolean
    allowed: boolean
    verdict: Verdict
  }
}

// Api ids repeat across every key of an api: one string each, for as many apis as a verifier plausibly sees.
const MAX_SHARED_API_IDS = 10_000
const apiIds = new Map<string, string>()

function sharedApiId(apiId: string): string {
  const known = apiIds.get(apiId)
  if (known !== undefined) return known
  if (apiIds.size < MAX_SHARED_API_IDS) apiIds.set(apiId, apiId)
  return apiId
}

// The fields a key may or may not have, each copied below when present. A field added to KeyRecord and not listed
// here (or dropped above) fails to compile; that each listed field is copied, the compiler cannot see:
// test/unit/cached-key.test.ts generates every KeyRecord field (held to it by the compiler) and checks the copy.
type OptionalField =
  | 'name'
  | 'ownerId'
  | 'meta'
  | 'expires'
  | 'remaining'
  | 'refill'
  | 'creditsLowThreshold'
  | 'ratelimit'
  | 'ratelimits'
  | 'environment'
  | 'permissionIds'
  | 'roleIds'
  | 'ipAllowlist'
type Listed = 'id' | 'hash' | 'apiId' | 'enabled' | 'rev' | 'resolved' | 'verdict' | OptionalField
const everyFieldListed: Exclude<keyof CachedKey, Listed> extends never ? true : never = true
void everyFieldListed

/**
 * Built once per cache fill (a miss or a change), never per verification. One property store per field present,
 * in a fixed order (so keys with the same fields share a shape): a loop over field names would make every store a
 * keyed, megamorphic one, which a verifier reading a key per request pays for.
 */
export function toCachedKey(record: Omit<CachedKey, 'resolved' | 'verdict'>): CachedKey {
  const key: CachedKey = {
    id: record.id,
    hash: record.hash,
    apiId: sharedApiId(record.apiId),
    enabled: record.enabled,
    rev: record.rev,
  }
  if (record.name !== undefined) key.name = record.name
  if (record.ownerId !== undefined) key.ownerId = record.ownerId
  if (record.meta !== undefined) key.meta = record.meta
  if (record.expires !== undefined) key.expires = record.expires
  if (record.remaining !== undefined) key.remaining = record.remaining
  if (record.refill !== undefined) key.refill = record.refill
  if (record.creditsLowThreshold !== undefined) key.creditsLowThreshold = record.creditsLowThreshold
  if (record.ratelimit !== undefined) key.ratelimit = record.ratelimit
  if (record.ratelimits !== undefined) key.ratelimits = record.ratelimits
  if (record.environment !== undefined) key.environment = record.environment
  if (record.permissionIds !== undefined) key.permissionIds = record.permissionIds
  if (record.roleIds !== undefined) key.roleIds = record.roleIds
  if (record.ipAllowlist !== undefined) key.ipAllowlist = record.ipAllowlist
  return key
}
