import type { Refill } from '../../../shared/credits.js'
import type { ApiError } from '../../../shared/errors.js'
import type { KeyPatch, KeyRecord } from '../../../shared/records.js'
import type { KeyWrite } from '../../../shared/store/api-key-store.js'
import { normalisedAllowlist, type AllowlistInput } from '../../../shared/ip-allowlist.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { checkCreditsLowThreshold } from '../../credits-low-threshold.js'
import { checkExpires } from '../../expires.js'
import { bindIdentity, checkIdentityBinding } from '../../identity-binding.js'
import { allowKeyGrants, takesAway } from '../../key-grants.js'
import { checkMeta } from '../../meta-limits.js'
import { checkDefaultLimit, namedLimitsOf, type NamedLimitInput } from '../../named-limits.js'
import { rateLimitOf, type RateLimitInput } from '../../rate-limit-body.js'
import type { RecordRef } from '../../rbac.js'
import { checkRefill, withRefillDay } from '../../refill-rules.js'
import { requireKeyPermission, type Principal } from '../../root-key-auth.js'
import { ownerIdOf } from '../../v1-field-rules.js'

/** A key's changes: left out = unchanged, null = cleared. */
export interface KeyChanges {
  name?: string | null
  externalId?: string | null
  /** Unkey's deprecated alias of externalId. */
  ownerId?: string | null
  meta?: Record<string, unknown> | null
  expires?: number | null
  remaining?: number | null
  refill?: Refill | null
  creditsLowThreshold?: number | null
  ratelimit?: RateLimitInput | null
  ratelimits?: readonly NamedLimitInput[] | null
  /** Replaces the key's IP allow-list (as the wire named the field); null or an empty list removes it. */
  ipAllowlist?: AllowlistInput | null
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

/**
 * What the wire's own rules found wrong with the input (problemOf), judged once for a key that carries credits and
 * once for one that does not (a refill needs a balance: given, or the key's).
 */
export interface ProblemByCredits {
  withCredits: ApiError | undefined
  withoutCredits: ApiError | undefined
}

export interface UpdateKeyInput extends KeyChanges {
  keyId: string
  /** Replace the key's permissions and roles (undefined: unchanged; [] takes them all away). */
  permissions?: readonly (string | RecordRef)[] | undefined
  roles?: readonly (string | RecordRef)[] | undefined
  grantRule: UpdateGrantRule
  /** Reported once the root key may update the key, before the changes are checked. */
  wireProblem?: ProblemByCredits | undefined
}

/**
 * Changes a key. 404, then 403, then the wire's problem with the input if it found one, then the content, before
 * anything (a permission, a role, an identity) is created for a call refused anyway; the write retries against
 * concurrent writers, checking again.
 */
export async function updateKey(deps: ControlPlaneDeps, caller: Caller, input: UpdateKeyInput): Promise<KeyWrite> {
  const { principal } = caller
  const { keyId, permissions, roles, grantRule, wireProblem, ...changes } = input
  const current = await deps.writes.readKey(keyId)
  requireKeyPermission(principal, current, 'update_key')
  const problem = current.remaining === undefined ? wireProblem?.withoutCredits : wireProblem?.withCredits
  if (problem) throw problem
  const checkContent = (record: KeyRecord) => {
    checkMeta(changes.meta)
    checkDefaultLimit(
      changes.ratelimit === undefined ? record.ratelimit : changes.ratelimit,
      changes.ratelimits === undefined ? record.ratelimits : changes.ratelimits,
    )
    checkExpires(changes.expires, deps.clock.now(), { pastAllowed: true })
    const hasCredits = changes.remaining === undefined ? record.remaining !== undefined : changes.remaining !== null
    checkRefill(changes.refill, hasCredits)
    checkCreditsLowThreshold(changes.creditsLowThreshold, hasCredits, 'creditsLowThreshold')
  }
  checkContent(current)
  const ipAllowlist = changes.ipAllowlist && (normalisedAllowlist(changes.ipAllowlist) ?? null)
  if (grantRule === 'needs-rbac-actions') {
    if (permissions?.length) allowKeyGrants(principal, 'permissions', true, false)
    if (roles?.length) allowKeyGrants(principal, 'roles', true, false)
  }
  const ownerId = ownerIdOf(changes)
  if (typeof ownerId === 'string') await checkIdentityBinding(deps, principal, ownerId)
  const patch: KeyPatch = {
    name: changes.name,
    ownerId,
    meta: changes.meta,
    expires: changes.expires,
    remaining: changes.remaining,
    refill: withRefillDay(changes.refill),
    creditsLowThreshold: changes.creditsLowThreshold,
    ratelimit: rateLimitOf(changes.ratelimit),
    ratelimits: changes.ratelimits && namedLimitsOf(changes.ratelimits),
    ipAllowlist,
    ...(await grantsOf(deps, principal, current, { permissions, roles }, grantRule)),
    enabled: changes.enabled,
  }
  if (typeof patch.ownerId === 'string') await bindIdentity(deps, caller, patch.ownerId)
  let before: KeyRecord | undefined
  const write = await deps.writes.updateKey(keyId, patch, (record) => {
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
