import type { KeyRecord } from '../shared/records.js'

/** A stored record as the wire shows it; the response schema drops anything not listed (the hash). */
export function toKeyResponse(record: KeyRecord) {
  return {
    id: record.id,
    start: record.start,
    apiId: record.apiId,
    name: record.name,
    ownerId: record.ownerId,
    meta: record.meta,
    expires: record.expires,
    remaining: record.remaining,
    refill: record.refill,
    ratelimit: record.ratelimit && { ...record.ratelimit, async: record.ratelimit.async ?? true },
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    enabled: record.enabled,
    environment: record.environment,
    permissions: record.permissions,
    roles: record.roles,
  }
}
