import type { Refill } from './credits.js'
import type { LeakMark } from '../leak.js'
import type { NamedRateLimit } from '../identity.js'
import type { RateLimitConfig } from '../ratelimits/ratelimit.js'
import type { UsageThreshold } from '../usage-threshold.js'

/** What the stores hold. Hashes live here and in change events; response schemas keep them off the wire. */

export interface ApiRecord {
  id: string
  name: string
  createdAt: number
  /** Set by apis.deleteApi before it deletes the keys: a deleting api is gone for every reader. */
  deleting?: boolean
}

export interface KeyRecord {
  id: string
  /** SHA-256 of the key, standard base64. */
  hash: string
  apiId: string
  start: string
  name?: string
  ownerId?: string
  meta?: Record<string, unknown>
  /** Unix ms after which the key verifies as EXPIRED (judged against the clock: no event needed). */
  expires?: number
  /**
   * Credits left, when the key carries credits (absent = unlimited). The live balance is kept apart from the
   * record's document and revision, so spending never invalidates a cache: this is the balance when read.
   */
  remaining?: number
  refill?: Refill
  /** The balance at or below which spending sends the webhook event `key.credits.low` (only with `remaining`). */
  creditsLowThreshold?: number
  ratelimit?: RateLimitConfig
  /** Limits verifyKey's `ratelimits[]` names (or that apply themselves): unique, no `default` beside `ratelimit`. */
  ratelimits?: NamedRateLimit[]
  environment?: string
  /**
   * Ids of the permission records granted to the key directly, sorted, unique. Names are resolved when the key is
   * verified or shown (key-context.ts): a deleted permission grants nothing, and one re-created under the same
   * name is another record the key does not hold.
   */
  permissionIds?: string[]
  /** Ids of the key's roles, sorted, unique: each grants its permissions, resolved the same way. */
  roleIds?: string[]
  /**
   * The addresses the key may be verified from: normalised CIDR ranges (shared/addresses/ip-allowlist.ts), never empty.
   * Absent: any address (its api's list, if it has one, still applies).
   */
  ipAllowlist?: string[]
  /** Its usage thresholds (shared/usage-threshold.ts), never empty; absent: none. Verifiers never read them. */
  usageThresholds?: UsageThreshold[]
  enabled: boolean
  /** The key this one replaced (keys.rerollKey), so that the change that created it can be told as a reroll. */
  rerolledFrom?: string
  /**
   * The key that replaced this one in a portal roll (operations/portal/reroll-key.ts), written before anything else of
   * the roll: it makes one roll of concurrent ones the key's, and once this key has expired the portal deletes it.
   */
  replacedBy?: string
  /** Set when the key was reported leaked (the latest report): shown by getKey, sent as `key.leaked`. */
  leaked?: LeakMark
  createdAt: number
  updatedAt?: number
  /** The shard revision of the record's last write: newer wins in every cache. */
  rev: number
}

/** Fields a writer sets on a new key; the store assigns `rev`. */
export type NewKeyRecord = Omit<KeyRecord, 'rev'>

/** updateKey's patch: a field absent is unchanged, `null` clears it. */
export interface KeyPatch {
  name?: string | null
  ownerId?: string | null
  meta?: Record<string, unknown> | null
  expires?: number | null
  /** Sets the balance (null: the key no longer carries credits, and loses its refill and low threshold). */
  remaining?: number | null
  refill?: Refill | null
  creditsLowThreshold?: number | null
  ratelimit?: RateLimitConfig | null
  /** Full replacement; [] or null removes them all. */
  ratelimits?: NamedRateLimit[] | null
  /** Full replacement (ids); [] removes them all. */
  permissionIds?: string[]
  roleIds?: string[]
  /** Full replacement (normalised); [] or null removes the list. */
  ipAllowlist?: string[] | null
  /** Full replacement (normalised); [] or null removes them. */
  usageThresholds?: UsageThreshold[] | null
  enabled?: boolean
  /** Written by leak reports only (control-plane/leaks/act-on-leak.ts). */
  leaked?: LeakMark | null
  /** Written by the portal's rolls only (control-plane/portal/session/reroll-key.ts). */
  replacedBy?: string | null
}

export interface RootKeyRecord {
  id: string
  /** SHA-256 of the root key, standard base64. */
  hash: string
  /** `kgroot_` and the first characters of the random part, to recognise it by (legacy root keys may lack it). */
  start?: string
  name?: string
  /** `*`, `<resource>.<id|*>.<action>` or `rootkey.*.manage` (shared/root-keys/root-key-actions.ts). */
  permissions: string[]
  /** The root key this one replaced (rootKeys.rollRootKey), so that its creation can be told as a roll. */
  rolledFrom?: string
  createdAt: number
  /**
   * When it last authenticated a management call, unix ms: recorded at most about once a minute per control plane
   * (control-plane/root-keys/root-key-use.ts), so it can be up to a minute early. Absent: not used since it was
   * created.
   */
  lastUsedAt?: number
}

/** Apply a patch to a record (pure): the one definition of updateKey's field semantics for every store. */
export function applyKeyPatch(record: KeyRecord, patch: KeyPatch, nowMs: number): NewKeyRecord {
  const { rev: _rev, ...next } = record
  const plain = [
    'name',
    'ownerId',
    'meta',
    'expires',
    'remaining',
    'refill',
    'creditsLowThreshold',
    'ratelimit',
    'leaked',
    'replacedBy',
  ] as const
  for (const field of plain) {
    const value = patch[field]
    if (value === null) delete next[field]
    else if (value !== undefined) (next as Record<string, unknown>)[field] = value
  }
  for (const field of ['ratelimits', 'ipAllowlist', 'usageThresholds'] as const) {
    const list = patch[field]
    if (list === undefined) continue
    if (list === null || list.length === 0) delete next[field]
    else (next as Record<string, unknown>)[field] = list
  }
  for (const field of ['permissionIds', 'roleIds'] as const) {
    const names = patch[field]
    if (names === undefined) continue
    if (names.length === 0) delete next[field]
    else next[field] = [...new Set(names)].sort()
  }
  // Both only mean something beside a balance: a key that loses its credits loses them too.
  if (patch.remaining === null) {
    delete next.refill
    delete next.creditsLowThreshold
  }
  if (patch.enabled !== undefined) next.enabled = patch.enabled
  next.updatedAt = nowMs
  return next
}
