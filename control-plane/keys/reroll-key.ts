import type { RootKeyAction } from '../../shared/root-keys/root-key-actions.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { checkIdentityBinding } from './key-references.js'
import { requireKeyPermission } from '../root-keys/root-key-auth.js'
import { replaceKey } from './replace-key.js'

/** What keys.rerollKey is given: the key, its grace period (ms) and the new key's prefix (default: the old one's). */
export interface RerollKeyInput {
  keyId: string
  expiration?: number | undefined
  prefix?: string | undefined
  /**
   * What the root key needs on the key's api: create_key, and update_key too when ending the old key counts as an
   * update of it (Unkey's v1 asks both; its v2 create_key only).
   */
  alsoNeedsUpdateKey: boolean
}

/**
 * Rotation: a new key with the same settings, and the old one expiring after the grace period. The new key is
 * created first, so a failure half-way never leaves the caller with no working key.
 */
export async function rerollKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: RerollKeyInput,
): Promise<{ keyId: string; key: string }> {
  const principal = caller.principal
  const { keyId, expiration = 0 } = input
  const old = await deps.writes.readKey(keyId)
  const actions: RootKeyAction[] = input.alsoNeedsUpdateKey ? ['create_key', 'update_key'] : ['create_key']
  requireKeyPermission(principal, old, ...actions)
  // The new key is bound to the old one's identity: a new key of an identity needs the right to bind to it, as on
  // createKey, or rerolling would hand out a key of an identity the root key may not read.
  if (old.ownerId !== undefined) await checkIdentityBinding(deps, principal, old.ownerId)
  const { created, key, graceEnds } = await replaceKey(deps, old, { expiration, prefix: input.prefix })
  caller.log.info({ keyId, newKeyId: created.id, graceMs: expiration, rootKeyId: principal.rootKeyId }, 'key rerolled')
  await deps.audit.record(caller, 'keys.rerollKey', {
    apiId: old.apiId,
    keyId,
    before: old,
    after: { newKeyId: created.id, oldKeyExpires: graceEnds },
  })
  return { keyId: created.id, key }
}
