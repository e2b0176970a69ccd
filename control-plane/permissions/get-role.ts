import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { NamedBy } from '../named-records.js'
import type { RoleWithPermissions } from './rbac.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/**
 * The role a request names (`role`, named as `by` says) and the permissions it grants, if the root key may read
 * roles; 404 if there is none.
 */
export async function getRole(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { role: string; by: NamedBy },
): Promise<RoleWithPermissions> {
  requireAction(caller.principal, 'rbac', '*', 'read_role')
  const role = await deps.rbac.roles.requireBy(input.role, input.by)
  const [shown] = await deps.rbac.withPermissions([role])
  return shown!
}
