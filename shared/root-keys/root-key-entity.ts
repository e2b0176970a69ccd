import { entityAddress } from '../entity.js'
import type { RootKeyRecord } from '../keys/records.js'

/**
 * What a verifier knows of a stored root key (v2's verifyKey takes one): its id and permissions, at
 * `rootkey:<hash>`, written through the entity mechanism (shard revision, log, publish) by the control plane beside
 * the root-key store (control-plane/root-keys/root-key-entities.ts), so the revocation bound covers root keys as it
 * does keys.
 * A revoked root key leaves a tombstone, never nothing: a write that only creates (`created`) can then never bring
 * it back, whoever raced the revoke.
 */
export type RootKeyEntity = { id: string; permissions: string[] } | { id: string; revoked: true }

/** Whether KEYGATE_ROOT_KEY is turned off, at BOOTSTRAP_ROOT_KEY_ADDRESS (absent: on). */
export interface BootstrapRootKeyEntity {
  disabled: boolean
}

/** A root key's address: its hash (44 characters of standard base64) under the `rootkey` type. */
export const rootKeyAddress = (hash: string) => entityAddress('rootkey', hash)

/** The bootstrap root key's switch; `bootstrap` is no hash (a hash is 44 characters), so it names no root key. */
export const BOOTSTRAP_ROOT_KEY_ADDRESS = entityAddress('rootkey', 'bootstrap')

export function rootKeyEntityOf(record: Pick<RootKeyRecord, 'id' | 'permissions'>): RootKeyEntity {
  return { id: record.id, permissions: record.permissions }
}

export function rootKeyTombstone(record: Pick<RootKeyRecord, 'id'>): RootKeyEntity {
  return { id: record.id, revoked: true }
}

/** The permissions of a live root key, or undefined for a tombstone (a revoked root key authenticates nothing). */
export function livePermissions(entity: RootKeyEntity): string[] | undefined {
  return 'revoked' in entity ? undefined : entity.permissions
}
