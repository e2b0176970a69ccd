import { lastRefillBoundary } from '../../../shared/credits.js'
import { newId } from '../../../shared/ids.js'
import { generateKey } from '../../../shared/key-material.js'
import type { KeyRecord } from '../../../shared/records.js'
import type { RootKeyAction } from '../../../shared/root-key-actions.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { checkIdentityBinding } from '../../identity-binding.js'
import { requireKeyPermission } from '../../root-key-auth.js'

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

/**
 * The rotation itself, once the caller may do it: a new key with the old one's settings (its prefix unless `prefix`
 * is given), the old key's credits moved to it, and the old key expiring `expiration` ms from now (or sooner, if it
 * already did), or deleted when `deleteOld` says so. The portal's rerollKey shares it. `admit`, when given, runs once
 * the new key is written and before anything of the old one changes: if it throws, the new key is deleted and the old
 * one is as it was.
 */
export async function replaceKey(
  deps: ControlPlaneDeps,
  old: KeyRecord,
  options: {
    expiration: number
    prefix?: string | undefined
    /** Random bytes of the new key (default 16): the old key's length is not kept. */
    byteLength?: number | undefined
    admit?: ((created: KeyRecord) => Promise<void>) | undefined
    /** The old key is deleted rather than expired (a roll that ends it at once, when nothing should keep it). */
    deleteOld?: boolean | undefined
  },
): Promise<{ created: KeyRecord; key: string; graceEnds: number }> {
  const now = deps.clock.now()
  const prefix = options.prefix ?? (old.start.includes('_') ? old.start.slice(0, old.start.indexOf('_')) : undefined)
  const { key, hash, start } = generateKey(prefix, options.byteLength ?? 16)
  const keyId = old.id
  const { expiration } = options
  // A leak mark is the old key's history, not a setting: the new key has not leaked.
  const {
    rev: _rev,
    id: _id,
    hash: _hash,
    start: _start,
    updatedAt: _updated,
    leaked: _leaked,
    remaining,
    ...settings
  } = old
  // Credits move, they are not copied: the new key starts empty and takes the old key's balance (the old
  // key then has none left for its grace period; a failure in between loses what was being moved).
  const created = await deps.writes.createKey({
    ...settings,
    ...(remaining === undefined ? {} : { remaining: 0 }),
    id: newId('key', now),
    hash,
    start,
    rerolledFrom: keyId,
    createdAt: now,
  })
  if (options.admit) {
    try {
      await options.admit(created.record)
    } catch (err) {
      await deps.writes.deleteKey(created.record.id)
      throw err
    }
  }
  if (remaining !== undefined) {
    const refill = old.refill && { boundary: lastRefillBoundary(old.refill, now), amount: old.refill.amount }
    const taken = await deps.store.keys.updateCredits(keyId, 'take', 0, refill, now)
    if (taken !== null && taken > 0)
      await deps.store.keys.updateCredits(created.record.id, 'increment', taken, undefined, now)
  }
  const graceEnds = now + expiration
  if (options.deleteOld) {
    await deps.writes.deleteKey(keyId)
    return { created: created.record, key, graceEnds }
  }
  await deps.writes.updateKey(
    keyId,
    (current) => ({
      expires: current.expires !== undefined && current.expires < graceEnds ? current.expires : graceEnds,
    }),
    () => {},
  )
  return { created: created.record, key, graceEnds }
}
