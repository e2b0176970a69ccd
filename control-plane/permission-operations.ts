import type { Caller } from './caller.js'
import { invalid } from '../shared/errors.js'
import { PERMISSION_NAME } from '../shared/permission-query.js'
import type { PermissionRecord } from '../shared/rbac.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { rbacRecordOperations } from './rbac-record-operations.js'
import { requireAction } from './root-key-auth.js'

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

const permissions = rbacRecordOperations('permission', (deps) => deps.rbac.permissions)
export const readPermission = permissions.read
export const deletePermission = permissions.delete
