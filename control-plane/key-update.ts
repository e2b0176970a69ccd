import type { Caller } from './caller.js'
import type { KeyPatch, KeyRecord } from '../shared/records.js'
import type { KeyWrite } from '../shared/store/api-key-store.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { checkExpires } from './expires.js'
import { bindIdentity, checkIdentityBinding } from './identity-binding.js'
import type { KeyWrites } from './key-writes.js'
import { checkMeta } from './meta-limits.js'
import { checkDefaultLimit, namedLimitsOf } from './named-limits.js'
import { rateLimitOf } from './rate-limit-body.js'
import { checkRefill, withRefillDay } from './refill-rules.js'
import { requireKeyPermission, type Principal } from './root-key-auth.js'
import type { UpdateKeyBody } from './schemas/key-schemas.js'
import { ownerIdOf } from './v1-field-rules.js'

/** A key's changes as either wire format asks for them: left out = unchanged, null = cleared. */
export type KeyChanges = Omit<UpdateKeyBody, 'keyId' | 'permissions' | 'roles'>

/** What each wire format decides itself: its own checks, and how the permissions and roles it names are found. */
export interface KeyUpdateRules {
  /** The format's own checks: after the 404, the 403 and the content, before anything named is looked up or made. */
  check?: (current: KeyRecord, principal: Principal) => void
  /** The ids the key will hold (undefined: unchanged), checked against the key as it is. */
  resolve: (current: KeyRecord, principal: Principal) => Promise<Pick<KeyPatch, 'permissionIds' | 'roleIds'>>
}

/**
 * keys.updateKey in either wire format: 404, then 403, then the content, before anything (a permission, a role, an
 * identity) is created for a call refused anyway; the write retries against concurrent writers, checking again.
 */
export async function updateKey(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  caller: Caller,
  keyId: string,
  changes: KeyChanges,
  rules: KeyUpdateRules,
): Promise<KeyWrite> {
  const principal = caller.principal
  const current = await writes.readKey(keyId)
  requireKeyPermission(principal, current, 'update_key')
  const checkContent = (record: KeyRecord) => {
    checkMeta(changes.meta)
    checkDefaultLimit(
      changes.ratelimit === undefined ? record.ratelimit : changes.ratelimit,
      changes.ratelimits === undefined ? record.ratelimits : changes.ratelimits,
    )
    checkExpires(changes.expires, deps.clock.now(), { pastAllowed: true })
    checkRefill(
      changes.refill,
      changes.remaining === undefined ? record.remaining !== undefined : changes.remaining !== null,
    )
  }
  checkContent(current)
  rules.check?.(current, principal)
  const ownerId = ownerIdOf(changes)
  if (typeof ownerId === 'string') await checkIdentityBinding(deps, principal, ownerId)
  const patch: KeyPatch = {
    name: changes.name,
    ownerId,
    meta: changes.meta,
    expires: changes.expires,
    remaining: changes.remaining,
    refill: withRefillDay(changes.refill),
    ratelimit: rateLimitOf(changes.ratelimit),
    ratelimits: changes.ratelimits && namedLimitsOf(changes.ratelimits),
    ...(await rules.resolve(current, principal)),
    enabled: changes.enabled,
  }
  if (typeof patch.ownerId === 'string') await bindIdentity(deps, caller, patch.ownerId)
  let before: KeyRecord | undefined
  const write = await writes.updateKey(keyId, patch, (record) => {
    before = record
    requireKeyPermission(principal, record, 'update_key')
    checkContent(record)
  })
  caller.log.info(
    { keyId, rev: write.record.rev, enabled: write.record.enabled, rootKeyId: principal.rootKeyId },
    'key updated',
  )
  await deps.audit.record(caller, 'keys.updateKey', { apiId: write.record.apiId, keyId, before, after: write.record })
  return write
}
