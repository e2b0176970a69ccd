import type { RootKeyRecord } from '../../keys/records.js'

/**
 * Root keys at rest: only their hashes, looked up by hash on every management call (so a revoke is refused by the
 * very next call, on every control plane), plus an index by id for list, revoke and roll. Every write is atomic:
 * a revoke or a roll is complete or not applied at all, never half of one. Root keys are few (people and
 * services that manage keys), so `listRootKeys` answers them all.
 */
export interface RootKeyStore {
  /** Stores a new root key; false (nothing written) if one with the same hash or id exists. */
  createRootKey(record: RootKeyRecord): Promise<boolean>
  /** The root key with that hash, `lastUsedAt` included; null for an unknown or revoked one. */
  getRootKeyByHash(hash: string): Promise<RootKeyRecord | null>
  getRootKeyById(id: string): Promise<RootKeyRecord | null>
  /** Every root key, oldest first (by id). Reads only: a listing writes nothing. */
  listRootKeys(): Promise<RootKeyRecord[]>
  /**
   * Moves root keys stored under a legacy layout into the store's own, once (a no-op where there is no legacy layout):
   * a control plane does it when it starts, so that lists from then on look in one place only.
   */
  moveLegacyRootKeys(): Promise<void>
  /**
   * Removes the root key: its hash authenticates nothing once this resolves. Answers what was removed, or null if
   * there was no such root key. Revoked root keys are not kept (the audit log names them).
   */
  revokeRootKey(id: string): Promise<RootKeyRecord | null>
  /**
   * Stores `next` and removes root key `id` in one atomic step; null (nothing written) if `id` is gone. Throws if
   * `next`'s hash or id is taken.
   */
  rollRootKey(id: string, next: RootKeyRecord): Promise<RootKeyRecord | null>
  /** Records a use: `lastUsedAt` becomes `atMs` unless it is later already. Never revives a revoked root key. */
  touchRootKey(hash: string, atMs: number): Promise<void>
  /** Whether the bootstrap root key (KEYGATE_ROOT_KEY) has been turned off; false until it is. */
  isBootstrapRootKeyDisabled(): Promise<boolean>
  setBootstrapRootKeyDisabled(disabled: boolean): Promise<void>
}
