import type { Caller } from './caller.js'
import { ApiError } from '../shared/errors.js'
import type { RoleRecord } from '../shared/rbac.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { rbacRecordOperations } from './rbac-record-operations.js'
import type { RecordRef } from './rbac.js'
import { may, requireAction, type Principal } from './root-key-auth.js'
import type { WireFormat } from './wire-format.js'

/**
 * Roles as both wire formats (v1, v2) write them. They differ where Unkey's did: v2 creates the permissions a
 * request names that do not exist yet (when the root key may create permissions), v1 only those marked
 * `create: true`; and v2's setRolePermissions needs both rbac actions on roles up front, whatever the role holds.
 */

/** The permissions a role is given: Unkey's rbac actions on roles. */
function allowRolePermissions(principal: Principal, removes: boolean): void {
  const needed = ['add_permission_to_role', ...(removes ? ['remove_permission_from_role' as const] : [])] as const
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((a) => `rbac.*.${a}`).join(' and ')}`,
    )
  }
}

/** Creates a role granting `permissions`; 409 CONFLICT if one has its name. */
export async function createRole(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { name: string; description?: string; permissions?: readonly (RecordRef | string)[] },
  wire: WireFormat,
): Promise<RoleRecord> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'create_role')
  const { name, description, permissions } = input
  if (permissions?.length) allowRolePermissions(principal, false)
  // v2 makes missing permissions on the way: a name already taken is refused before any is made.
  if (wire === 'v2' && (await deps.rbac.roles.findByName(name))) throw deps.rbac.roles.nameTaken(name)
  const permissionIds = permissions?.length
    ? await deps.rbac.permissionIdsOf(permissions, principal, wire === 'v2')
    : undefined
  const role = await deps.rbac.createRole({ name, description, permissionIds })
  caller.log.info({ roleId: role.id, rootKeyId: principal.rootKeyId }, 'role created')
  await deps.audit.record(caller, 'permissions.createRole', { after: { ...role } })
  return role
}

const roles = rbacRecordOperations('role', (deps) => deps.rbac.roles)
export const readRole = roles.read
export const deleteRole = roles.delete

/** Replaces the permissions a role grants: one write, and every key holding the role follows. */
export async function setRolePermissions(
  deps: ControlPlaneDeps,
  caller: Caller,
  roleId: string,
  permissions: readonly (RecordRef | string)[],
  wire: WireFormat,
): Promise<RoleRecord> {
  const principal = caller.principal
  if (wire === 'v2') allowRolePermissions(principal, true)
  const before = await deps.rbac.roles.require(roleId)
  // v1 asks for removal only of a role that has something to remove.
  if (wire === 'v1') allowRolePermissions(principal, before.permissionIds.length > 0)
  const permissionIds = await deps.rbac.permissionIdsOf(permissions, principal, wire === 'v2')
  // One write: every key holding the role is granted exactly these from its next verification on.
  const role = await deps.rbac.setRolePermissions(roleId, permissionIds)
  caller.log.info(
    { roleId, permissions: role.permissionIds.length, rootKeyId: principal.rootKeyId },
    'role permissions set',
  )
  await deps.audit.record(caller, 'permissions.setRolePermissions', { before: { ...before }, after: { ...role } })
  return role
}
