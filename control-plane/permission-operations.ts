import type { Caller } from './caller.js'
import { invalid } from '../shared/errors.js'
import { PERMISSION_NAME } from '../shared/permission-query.js'
import type { PermissionRecord } from '../shared/rbac.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { requireAction } from './root-key-auth.js'

/**
 * How a request names a permission or a role: v1 by its id; v2 by its id or its unique name (a permission's slug,
 * a role's name).
 */
export type NamedBy = 'id' | 'id-or-name'

/** Permissions as both wire formats (v1, v2) create, read and delete them: the root key's permission first. */

/** Creates a permission; 409 CONFLICT if one has its slug. */
export async function createPermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { name: string; slug?: string; description?: string },
): Promise<PermissionRecord> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'create_permission')
  const { name, slug, description } = input
  if (slug === undefined && !PERMISSION_NAME.test(name)) {
    throw invalid(
      'name',
      'is also the slug keys are granted by, so it must be 1–256 of letters, digits and _ . : * - / (or give a slug)',
    )
  }
  const permission = await deps.rbac.createPermission({ name, slug, description })
  caller.log.info({ permissionId: permission.id, rootKeyId: principal.rootKeyId }, 'permission created')
  await deps.audit.record(caller, 'permissions.createPermission', { after: { ...permission } })
  return permission
}

/** The permission a request names, if the root key may read permissions; the contract's 404 when there is none. */
export async function readPermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  permission: string,
  by: NamedBy,
): Promise<PermissionRecord> {
  requireAction(caller.principal, 'rbac', '*', 'read_permission')
  return by === 'id' ? deps.rbac.permissions.require(permission) : deps.rbac.permissions.requireNamed(permission)
}

/** Deletes the permission a request names; 404 if there is none. */
export async function deletePermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  permission: string,
  by: NamedBy,
): Promise<PermissionRecord> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'delete_permission')
  const id = by === 'id' ? permission : (await deps.rbac.permissions.requireNamed(permission)).id
  // One write: every key and role that referenced it stops granting it (references are resolved, not copied).
  const deleted = await deps.rbac.permissions.delete(id)
  caller.log.info({ permissionId: deleted.id, rootKeyId: principal.rootKeyId }, 'permission deleted')
  await deps.audit.record(caller, 'permissions.deletePermission', { before: { ...deleted } })
  return deleted
}
