import type { RoleRecord } from '../../shared/rbac.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireRolePermissionActions, type MissingPermissionNames, type RecordRef } from './rbac.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** A new role: its unique name, and the permissions it grants (missing ones made as `missingPermissions` says). */
export interface CreateRoleInput {
  name: string
  description?: string
  permissions?: readonly (RecordRef | string)[]
  missingPermissions: MissingPermissionNames
}

/**
 * Creates a role granting `permissions`: `rbac.*.create_role`, and `add_permission_to_role` when it is given any;
 * 409 CONFLICT if one has its name. A rule that makes any missing permission (`create-if-allowed`) refuses a name
 * already taken before it makes one; under `create-marked` the role's own write finds it taken.
 */
export async function createRole(deps: ControlPlaneDeps, caller: Caller, input: CreateRoleInput): Promise<RoleRecord> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'create_role')
  const { name, description, permissions, missingPermissions } = input
  if (permissions?.length) requireRolePermissionActions(principal, false)
  const createMissing = missingPermissions === 'create-if-allowed'
  if (createMissing && (await deps.rbac.roles.findByName(name))) throw deps.rbac.roles.nameTaken(name)
  const permissionIds = permissions?.length
    ? await deps.rbac.permissionIdsOf(permissions, principal, createMissing)
    : undefined
  const role = await deps.rbac.createRole({ name, description, permissionIds })
  caller.log.info({ roleId: role.id, rootKeyId: principal.rootKeyId }, 'role created')
  await deps.audit.record(caller, 'permissions.createRole', { after: { ...role } })
  return role
}
