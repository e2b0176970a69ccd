import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import {
  requireRolePermissionActions,
  type MissingPermissionNames,
  type RecordRef,
  type RoleWithPermissions,
} from './rbac.js'

/**
 * Which rbac actions replacing a role's permissions asks of the root key, by Unkey's two rules: `add-and-remove`
 * (v2) both, before the role is looked up, whatever it holds; `remove-if-granted` (v1) add_permission_to_role, and
 * remove_permission_from_role only of a role that has something to remove, once the role is found (its 404 first).
 */
export type RolePermissionsRule = 'add-and-remove' | 'remove-if-granted'

/** A role's permissions from now on, by id or slug; those missing are made as `missingPermissions` says. */
export interface SetRolePermissionsInput {
  roleId: string
  permissions: readonly (RecordRef | string)[]
  actionsNeeded: RolePermissionsRule
  missingPermissions: MissingPermissionNames
}

/**
 * Replaces the permissions a role grants, and answers the role with them: one write, and every key holding the
 * role follows.
 */
export async function setRolePermissions(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: SetRolePermissionsInput,
): Promise<RoleWithPermissions> {
  const principal = caller.principal
  const { roleId, actionsNeeded } = input
  if (actionsNeeded === 'add-and-remove') requireRolePermissionActions(principal, true)
  const before = await deps.rbac.roles.require(roleId)
  if (actionsNeeded === 'remove-if-granted') requireRolePermissionActions(principal, before.permissionIds.length > 0)
  const createMissing = input.missingPermissions === 'create-if-allowed'
  const permissionIds = await deps.rbac.permissionIdsOf(input.permissions, principal, createMissing)
  // One write: every key holding the role is granted exactly these from its next verification on.
  const role = await deps.rbac.setRolePermissions(roleId, permissionIds)
  caller.log.info(
    { roleId, permissions: role.permissionIds.length, rootKeyId: principal.rootKeyId },
    'role permissions set',
  )
  await deps.audit.record(caller, 'permissions.setRolePermissions', { before: { ...before }, after: { ...role } })
  const [shown] = await deps.rbac.withPermissions([role])
  return shown!
}
