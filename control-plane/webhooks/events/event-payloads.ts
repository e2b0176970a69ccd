import type { IdentityRecord } from '../../../shared/identity.js'
import type { KeyRecord } from '../../../shared/keys/records.js'

/**
 * What an event says of a key: ids and settings, never its hash (nor, since only hashes are kept, the key). `start`
 * is the key's visible prefix, as listKeys shows it. Its identity by both names: `externalId` (what the key record
 * binds by) and `identityId` (`id_…`, as identity events name it), the latter when the identity exists.
 */
export function keyData(key: KeyRecord, identityId: string | undefined): Record<string, unknown> {
  return {
    keyId: key.id,
    apiId: key.apiId,
    start: key.start,
    name: key.name,
    identityId,
    externalId: key.ownerId,
    meta: key.meta,
    enabled: key.enabled,
    expires: key.expires,
    remaining: key.remaining,
    createdAt: key.createdAt,
    updatedAt: key.updatedAt,
  }
}

export function identityData(identity: IdentityRecord): Record<string, unknown> {
  return { identityId: identity.id, externalId: identity.externalId, meta: identity.meta }
}

/**
 * `key.updated`'s `changed`: the record's changed fields in the names the API uses (enabled, expires, credits, limits,
 * permissions, roles, name, meta, identity…), sorted, each once.
 */
export function changedNames(fields: readonly string[]): string[] {
  const names = fields.map((field) => WIRE_NAMES[field] ?? field)
  return [...new Set(names)].sort()
}

const WIRE_NAMES: Record<string, string> = {
  remaining: 'credits',
  refill: 'credits',
  creditsLowThreshold: 'credits',
  ratelimit: 'ratelimits',
  ratelimits: 'ratelimits',
  permissionIds: 'permissions',
  roleIds: 'roles',
  ownerId: 'identity',
}
