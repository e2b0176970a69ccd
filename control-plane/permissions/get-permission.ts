import type { PermissionRecord } from '../../shared/rbac.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { NamedBy } from '../named-records.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** The permission a request names (`permission`, named as `by` says), if the root key may read permissions; 404. */
export async function getPermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { permission: string; by: NamedBy },
): Promise<PermissionRecord> {
  requireAction(caller.principal, 'rbac', '*', 'read_permission')
  return deps.rbac.permissions.requireBy(input.permission, input.by)
}
