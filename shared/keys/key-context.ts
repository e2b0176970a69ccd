import type { IdentityRecord } from '../identity.js'
import { identityAddress, type NamedRateLimit } from '../identity.js'
import type { AddressRule } from '../addresses/address-rule.js'
import { keyLimitsOf, type KeyLimits } from './key-limits.js'
import type { RateLimitConfig } from '../ratelimits/ratelimit.js'
import { permissionAddress, roleAddress, type PermissionRecord, type RoleRecord } from '../rbac.js'

/** The references of a key that are resolved through other records when it is verified or shown. */
export interface KeyReferences {
  /** Owns the counters of the key's own limits. */
  hash: string
  ratelimit?: RateLimitConfig
  ratelimits?: NamedRateLimit[]
  permissionIds?: string[]
  roleIds?: string[]
  /** The externalId: the key's identity, if one exists with it. */
  ownerId?: string
}

/** What a key is granted and who it belongs to, resolved from the records it references. */
export interface KeyContext {
  /** Effective permission slugs: the key's own and those of its roles, sorted, unique; only existing records. */
  permissions: string[]
  /** Names of the key's roles that exist, sorted. */
  roles: string[]
  identity?: IdentityRecord
  /** The rate limits its verifications may use (key-limits.ts); absent when it has none and no identity. */
  limits?: KeyLimits
  /**
   * The allow-lists the client's address must pass: the key's and its api's (verify-context.ts resolves them for
   * verifications; management reads leave them out). Absent when neither has one.
   */
  addresses?: AddressRule
}

export const EMPTY_CONTEXT: KeyContext = Object.freeze({ permissions: [], roles: [] })

/**
 * An entity's document by address: the record, `null` when there is none, `undefined` when the caller does not
 * have it at hand (then resolution names what it needs instead of an answer).
 */
export type EntityLookup = (address: string) => unknown

/**
 * Resolves a key's context from the records it references (pure). Returns the context, or the addresses that
 * `get` did not have: read them and call again. Roles are read before their permissions, so a key holding roles
 * may take two rounds.
 */
export function resolveKeyContext(key: KeyReferences, get: EntityLookup): KeyContext | { missing: string[] } {
  if (key.permissionIds === undefined && key.roleIds === undefined && key.ownerId === undefined) {
    if (key.ratelimit === undefined && key.ratelimits === undefined) return EMPTY_CONTEXT
  }
  const missing: string[] = []
  const read = <T>(address: string): T | null => {
    const doc = get(address)
    if (doc === undefined) {
      missing.push(address)
      return null
    }
    return doc as T | null
  }
  const roles: RoleRecord[] = []
  for (const id of key.roleIds ?? []) {
    const role = read<RoleRecord>(roleAddress(id))
    if (role) roles.push(role)
  }
  const identity = key.ownerId === undefined ? null : read<IdentityRecord>(identityAddress(key.ownerId))
  if (missing.length > 0) return { missing }
  // No roles and no permissions (most keys, and every key a verifier reads on a miss resolves afresh): no sets.
  if (roles.length === 0 && (key.permissionIds === undefined || key.permissionIds.length === 0)) {
    const limits = keyLimitsOf(key, identity ?? undefined)
    if (!identity && !limits) return EMPTY_CONTEXT
    const context: KeyContext = { permissions: [], roles: [] }
    if (identity) context.identity = identity
    if (limits) context.limits = limits
    return context
  }
  const permissionIds = new Set(key.permissionIds)
  for (const role of roles) for (const id of role.permissionIds) permissionIds.add(id)
  const permissions = new Set<string>()
  for (const id of permissionIds) {
    const permission = read<PermissionRecord>(permissionAddress(id))
    if (permission) permissions.add(permission.slug)
  }
  if (missing.length > 0) return { missing }
  const context: KeyContext = {
    permissions: [...permissions].sort(),
    roles: roles.map((role) => role.name).sort(),
  }
  if (identity) context.identity = identity
  const limits = keyLimitsOf(key, identity ?? undefined)
  if (limits) context.limits = limits
  return context
}
