import { EMPTY_CONTEXT, type KeyContext } from '../../shared/keys/key-context.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { withRefillDay } from './key-fields.js'
import { WORKSPACE_ID } from '../workspace.js'

/**
 * A stored record as the wire shows it, with what it is granted and who it belongs to (`context`, resolved from
 * its roles, permissions and identity); the response schema drops anything not listed (the hash).
 */
export function toKeyResponse(record: KeyRecord, context: KeyContext) {
  return {
    id: record.id,
    start: record.start,
    apiId: record.apiId,
    workspaceId: WORKSPACE_ID,
    name: record.name,
    ownerId: record.ownerId,
    meta: record.meta,
    expires: record.expires,
    remaining: record.remaining,
    refill: withRefillDay(record.refill),
    creditsLowThreshold: record.creditsLowThreshold,
    ratelimit: record.ratelimit && { ...record.ratelimit, async: record.ratelimit.async ?? true },
    ratelimits: record.ratelimits,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    enabled: record.enabled,
    environment: record.environment,
    permissions: context.permissions.length > 0 ? context.permissions : undefined,
    roles: context.roles.length > 0 ? context.roles : undefined,
    identity: context.identity && {
      id: context.identity.id,
      externalId: context.identity.externalId,
      meta: context.identity.meta,
    },
    leaked: record.leaked,
    ipWhitelist: record.ipAllowlist,
    usageThresholds: record.usageThresholds,
  }
}

/**
 * A key record as the audit log shows it: the response allow-list (no hash), with its references as stored (ids),
 * what the key held at that moment whatever their records became since.
 */
export function auditedKey(record: KeyRecord): Record<string, unknown> {
  const visible = {
    ...toKeyResponse(record, EMPTY_CONTEXT),
    permissionIds: record.permissionIds,
    roleIds: record.roleIds,
  } as Record<string, unknown>
  for (const field of Object.keys(visible)) if (visible[field] === undefined) delete visible[field]
  return visible
}
