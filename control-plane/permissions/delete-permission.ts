import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { NamedBy } from '../named-records.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/**
 * Deletes the permission a request names (`permission`, named as `by` says) if the root key may delete permissions;
 * 404 if there is none. One write: every key and role that referenced it stops granting it (references are
 * resolved, not copied).
 */
export async function deletePermission(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { permission: string; by: NamedBy },
): Promise<void> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'delete_permission')
  const deleted = await deps.rbac.permissions.deleteNamed(input.permission, input.by)
  caller.log.info({ permissionId: deleted.id, rootKeyId: principal.rootKeyId }, 'permission deleted')
  await deps.audit.record(caller, 'permissions.deletePermission', { before: { ...deleted } })
}
