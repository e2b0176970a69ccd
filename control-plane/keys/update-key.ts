import type { Refill } from '../../shared/keys/credits.js'
import type { KeyPatch, KeyRecord } from '../../shared/keys/records.js'
import type { KeyWrite } from '../../shared/store/api-keys/api-key-store.js'
import type { NamedRateLimit } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import {
  checkCreditsLowThreshold,
  completeRateLimit,
  type AskedRateLimit,
  checkExpires,
  checkRefill,
  withRefillDay,
  checkMeta,
  checkDefaultLimit,
  namedLimitsOf,
} from './key-fields.js'
import { bindIdentity, checkIdentityBinding } from './key-references.js'
import { allowKeyGrants, takesAway } from './grants/key-grants.js'
import type { RecordRef } from '../permissions/rbac.js'
import { requireKeyPermission, type Principal } from '../root-keys/root-key-auth.js'
import { normalisedThresholds, type UsageThreshold } from '../../shared/usage-threshold.js'
import { UsageThresholdIndex } from '../analytics/usage-threshold-index.js'

/**
 * A key's changes as the keys domain takes them, whichever wire asked: left out = unchanged, null = cleared. The
 * wire's aliases are resolved by its adapter (v1's `ownerId`, its rate limit's old spellings), the allow-list
 * normalised (null removes it).
 */
export interface KeyChanges {
  name?: string | null
  externalId?: string | null
  meta?: Record<string, unknown> | null
  expires?: number | null
  remaining?: number | null
  refill?: Refill | null
  creditsLowThreshold?: number | null
  ratelimit?: AskedRateLimit | null
  ratelimits?: readonly NamedRateLimit[] | null
  ipAllowlist?: string[] | null
  usageThresholds?: readonly UsageThreshold[] | null
  enabled?: boolean
}

/**
 * Unkey's two rules for the permissions and roles keys.updateKey replaces. `needs-rbac-actions`: the change needs the
 * rbac actions for it, as keys.addPermissions does (adding; removing too when any is taken away), checked before
 * anything named is created; a name is created when missing only as its reference says (`create: true`) and when the
 * root key may. `create-permissions`: no rbac action is asked; each role must exist (404), and roles are resolved
 * first so that nothing is made for a call refused for a role; a permission slug with no record is made.
 */
export type UpdateGrantRule = 'needs-rbac-actions' | 'create-permissions'

export interface UpdateKeyInput extends KeyChanges {
  keyId: string
  /** Replace the key's permissions and roles (undefined: unchanged; [] takes them all away). */
  permissions?: readonly (string | RecordRef)[] | undefined
  roles?: readonly (string | RecordRef)[] | undefined
  grantRule: UpdateGrantRule
}

/**
 * Changes a key. 404, then 403, then the changes' rules (checked once, in createKey's order: credits, meta, named
 * limits, expiry), before anything (a permission, a role, an identity) is created for a call refused anyway; the
 * write retries against concurrent writers, checking again against the key as it then is.
 */
export async function updateKey(deps: ControlPlaneDeps, caller: Caller, input: UpdateKeyInput): Promise<KeyWrite> {
  const { principal } = caller
  const { keyId, permissions, roles, grantRule, ...changes } = input
  const current = await deps.writes.readKey(keyId)
  requireKeyPermission(principal, current, 'update_key')
  const checkContent = (record: KeyRecord, ratelimits: KeyChanges['ratelimits']) => {
    const hasCredits = changes.remaining === undefined ? record.remaining !== undefined : changes.remaining !== null
    checkRefill(changes.refill, hasCredits)
    checkCreditsLowThreshold(changes.creditsLowThreshold, hasCredits)
    checkMeta(changes.meta)
    checkDefaultLimit(
      changes.ratelimit === undefined ? record.ratelimit : changes.ratelimit,
      ratelimits === undefined ? record.ratelimits : ratelimits,
    )
    checkExpires(changes.expires, deps.clock.now(), { pastAllowed: true })
  }
  const ratelimits = changes.ratelimits && namedLimitsOf(changes.ratelimits)
  checkContent(current, ratelimits)
  if (grantRule === 'needs-rbac-actions') {
    if (permissions?.length) allowKeyGrants(principal, 'permissions', true, false)
    if (roles?.length) allowKeyGrants(principal, 'roles', true, false)
  }
  const ownerId = changes.externalId
  if (typeof ownerId === 'string') await checkIdentityBinding(deps, principal, ownerId)
  const patch: KeyPatch = {
    name: changes.name,
    ownerId,
    meta: changes.meta,
    expires: changes.expires,
    remaining: changes.remaining,
    refill: withRefillDay(changes.refill),
    creditsLowThreshold: changes.creditsLowThreshold,
    ratelimit: changes.ratelimit && completeRateLimit(changes.ratelimit),
    ratelimits,
    ipAllowlist: changes.ipAllowlist,
    usageThresholds: changes.usageThresholds && normalisedThresholds(changes.usageThresholds),
    ...(await grantsOf(deps, principal, current, { permissions, roles }, grantRule)),
    enabled: changes.enabled,
  }
  if (typeof patch.ownerId === 'string') await bindIdentity(deps, caller, patch.ownerId)
  const subject = { keyId }
  const thresholdIndex = new UsageThresholdIndex(deps.store.entities)
  const thresholdsNow = async () => (await deps.store.keys.getKeyById(keyId))?.usageThresholds
  await thresholdIndex.beforeWrite(subject, patch.usageThresholds ?? undefined)
  let before: KeyRecord | undefined
  const write = await deps.writes.updateKey(keyId, patch, (record) => {
    before = record
    requireKeyPermission(principal, record, 'update_key')
    checkContent(record, ratelimits)
  })
  if (patch.usageThresholds?.length) await thresholdIndex.afterSetting(subject, thresholdsNow)
  else if (patch.usageThresholds !== undefined && before?.usageThresholds) {
    await thresholdIndex.afterClearing(subject, thresholdsNow)
  }
  caller.log.info(
    { keyId, rev: write.record.rev, enabled: write.record.enabled, rootKeyId: principal.rootKeyId },
    'key updated',
  )
  await deps.audit.record(caller, 'keys.updateKey', { apiId: write.record.apiId, keyId, before, after: write.record })
  return write
}

/** The ids the key will hold by `rule` (undefined: unchanged), checked against the key as it is. */
async function grantsOf(
  deps: ControlPlaneDeps,
  principal: Principal,
  current: KeyRecord,
  names: Pick<UpdateKeyInput, 'permissions' | 'roles'>,
  rule: UpdateGrantRule,
): Promise<Pick<KeyPatch, 'permissionIds' | 'roleIds'>> {
  const { permissions, roles } = names
  if (rule === 'create-permissions') {
    const roleIds = roles && (await deps.rbac.roleIdsOf(roles, principal, false))
    const permissionIds = permissions && (await deps.rbac.permissionIdsOf(permissions, principal, 'by-operation'))
    return { permissionIds, roleIds }
  }
  const permissionIds = permissions && (await deps.rbac.permissionIdsOf(permissions, principal, false))
  const roleIds = roles && (await deps.rbac.roleIdsOf(roles, principal, false))
  if (permissionIds && takesAway(current.permissionIds, permissionIds)) {
    allowKeyGrants(principal, 'permissions', false, true)
  }
  if (roleIds && takesAway(current.roleIds, roleIds)) allowKeyGrants(principal, 'roles', false, true)
  return { permissionIds, roleIds }
}
