import { createHash } from 'node:crypto'
import { shardOf } from './shards.js'

/**
 * Records beyond keys that decide verdicts — permissions, roles, identities, rate-limit namespaces and overrides,
 * root keys (v2's verifyKey takes one: shared/root-keys/root-key-entity.ts), apis' settings (shared/api-settings.ts) —
 * ride the keys' mechanism (DESIGN.md, "Records beyond keys"): each lives in a shard, each write bumps that shard's
 * revision and appends to its log in one step, and verifiers cache them under the same bound. In the change log
 * and in the verifiers' caches a record is known by its address, `<type>:<key>`; a key is known by its hash,
 * which (standard base64) never holds a colon, so one field tells them apart. Portals (shared/portal/portal.ts)
 * decide no verdict but ride the same mechanism, so that every record the control plane writes is written one way.
 */
export type EntityType = 'permission' | 'role' | 'identity' | 'namespace' | 'override' | 'rootkey' | 'api' | 'portal'

/** A stored record and the shard revision of its last write (newer wins in every cache). */
export interface StoredEntity<T> {
  doc: T
  rev: number
}

export function entityAddress(type: EntityType, key: string): string {
  return `${type}:${key}`
}

/** Whether a change event's `hash` is an entity's address rather than a key's hash. */
export function isEntityAddress(hashOrAddress: string): boolean {
  return hashOrAddress.includes(':')
}

/** The shard of an entity: chosen from the SHA-256 of its address, as a key's is from its hash. */
export function entityShard(address: string): number {
  return shardOf(createHash('sha256').update(address).digest('base64'))
}
