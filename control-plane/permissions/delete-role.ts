import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { NamedBy } from '../named-records.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/**
 * Deletes the role a request names (`role`, named as `by` says) if the root key may delete roles; 404 if there is
 * none. One write: every key that held it loses what it granted (references are resolved, not copied).
 */
export async function deleteRole(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { role: string; by: NamedBy },
): Promise<void> {
  const principal = caller.principal
  requireAction(principal, 'rbac', '*', 'delete_role')
  const deleted = await deps.rbac.roles.deleteNamed(input.role, input.by)
  caller.log.info({ roleId: deleted.id, rootKeyId: principal.rootKeyId }, 'role deleted')
  await deps.audit.record(caller, 'permissions.deleteRole', { before: { ...deleted } })
}
