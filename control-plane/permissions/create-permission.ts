import { invalid } from '../../shared/errors/errors.js'
import { PERMISSION_NAME } from '../../shared/verification/permission-query.js'
import type { PermissionRecord } from '../../shared/rbac.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** A new permission: its slug is its name unless given. */
export interface CreatePermissionInput {
  name: string
  slug?: string
  description?: string
}

/** Creates a permission (`rbac.*.create_permission`, then the name as a slug); 409 CONFLICT if one has its slug. */
export async function createPermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreatePermissionInput,
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
