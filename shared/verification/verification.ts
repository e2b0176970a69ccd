import type { VerificationSource } from './verification-source.js'
import { frozenWithMemo } from '../frozen-memo.js'
import { satisfies, type PermissionQuery } from './permission-query.js'
import type { KeyContext } from '../keys/key-context.js'
import type { KeyRecord } from '../keys/records.js'
import type { NamedRateLimit } from '../identity.js'

/**
 * Verdict codes in the order they are checked (docs/api.md, "Verification"), but for FORBIDDEN, which has two causes
 * checked at two places, as Unkey checks them: another api than the one asked about (before EXPIRED), and a client
 * address outside the key's or its api's allow-list (after EXPIRED, before INSUFFICIENT_PERMISSIONS).
 */
export type VerdictCode =
  | 'NOT_FOUND'
  | 'DISABLED'
  | 'FORBIDDEN'
  | 'EXPIRED'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'RATE_LIMITED'
  | 'USAGE_EXCEEDED'
  | 'VALID'

export const VERDICT_CODES: readonly VerdictCode[] = [
  'NOT_FOUND',
  'DISABLED',
  'FORBIDDEN',
  'EXPIRED',
  'INSUFFICIENT_PERMISSIONS',
  'RATE_LIMITED',
  'USAGE_EXCEEDED',
  'VALID',
]

export interface VerifyRequest {
  apiId?: string
  /** What the key's permissions must satisfy (verifyKey's authorization.permissions, forward-auth's required list). */
  permissions?: PermissionQuery
  /** Credits this verification spends on a key that carries credits (default 1; 0 = free). */
  cost?: number
  /** Cost against the key's own rate limit, `default` (default 1). */
  keyLimitCost?: number
  /**
   * Limits by name (verifyKey's ratelimits[]): the key's or its identity's of that name, or one the request defines
   * (limit and duration), applied after the auto-applied ones (key-verifier.ts, appliedLimits).
   */
  ratelimits?: RequestedLimit[]
  /** Where it was asked, for analytics (default: v1's verifyKey). Decides nothing. */
  source?: VerificationSource
  /** The caller's analytics tags. Decide nothing. */
  tags?: readonly string[]
}

/** A limit verifyKey's `ratelimits[]` asks for; limit and duration override a stored limit's, or define one. */
export interface RequestedLimit {
  name: string
  cost?: number
  limit?: number
  duration?: number
  async?: boolean
}

/** The state of one limit a verification used. */
export interface LimitState {
  name: string
  limit: number
  duration: number
  remaining: number
  reset: number
  exceeded: boolean
  /** A stored limit that applies itself to every call (v2 answers it). */
  autoApply: boolean
  /** Counted for every key of the key's identity, not for the key alone (v2's limit id names the counter's owner). */
  ofIdentity: boolean
}

export interface Verdict {
  valid: boolean
  code: VerdictCode
  keyId?: string
  name?: string
  ownerId?: string
  meta?: Record<string, unknown>
  expires?: number
  enabled?: boolean
  environment?: string
  /** Effective permissions: the key's own and its roles'. */
  permissions?: string[]
  roles?: string[]
  /** The identity the key belongs to (through its externalId), if one exists, with the limits it holds. */
  identity?: { id: string; externalId: string; meta: Record<string, unknown>; ratelimits?: NamedRateLimit[] }
  /** Credits left, for a key that carries credits. */
  remaining?: number
  /** The state of the limit that refused the call, or of the key's own rate limit (`default`). */
  ratelimit?: { limit: number; remaining: number; reset: number }
  /** Every limit the call was checked against (up to the one that refused it), in order. */
  ratelimits?: LimitState[]
}

const NOT_FOUND: Verdict = frozenWithMemo({ valid: false, code: 'NOT_FOUND' })

/**
 * The verification rules: one pure function of the record (null = no such key), what it is granted (resolved
 * from its roles, permissions and identity: key-context.ts), the request, the clock, and whether the request's client
 * address passes the key's and its api's allow-lists (address-rule.ts: the caller knows the address, and asks only
 * when `context.addresses` is set). Every verifier and the control plane answer through it, so they cannot disagree.
 */
export function verify(
  record: Omit<KeyRecord, 'start' | 'createdAt' | 'updatedAt'> | null,
  context: KeyContext,
  request: VerifyRequest,
  nowMs: number,
  addressAllowed = true,
): Verdict {
  if (record === null) return NOT_FOUND
  const code: VerdictCode = !record.enabled
    ? 'DISABLED'
    : request.apiId !== undefined && request.apiId !== record.apiId
      ? 'FORBIDDEN'
      : record.expires !== undefined && nowMs >= record.expires
        ? 'EXPIRED'
        : !addressAllowed
          ? 'FORBIDDEN'
          : request.permissions !== undefined && !satisfies(context.permissions, request.permissions)
            ? 'INSUFFICIENT_PERMISSIONS'
            : 'VALID'
  return {
    valid: code === 'VALID',
    code,
    keyId: record.id,
    name: record.name,
    ownerId: record.ownerId,
    meta: record.meta,
    expires: record.expires,
    enabled: record.enabled,
    permissions: context.permissions.length > 0 ? context.permissions : undefined,
    roles: context.roles.length > 0 ? context.roles : undefined,
    identity: context.identity && {
      id: context.identity.id,
      externalId: context.identity.externalId,
      meta: context.identity.meta ?? {},
      ratelimits: context.identity.ratelimits,
    },
    environment: record.environment,
  }
}
