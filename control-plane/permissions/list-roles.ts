import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { searchFor, type PageOptions, type RecordPage } from '../index-page.js'
import type { RoleWithPermissions } from './rbac.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** A page of roles: `search`, when given, keeps those whose id, name or description contains it. */
export interface ListRolesInput extends PageOptions {
  search?: string
}

/** A page of roles, oldest first, each with the permissions it grants, if the root key may read roles. */
export async function listRoles(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListRolesInput,
): Promise<RecordPage<RoleWithPermissions>> {
  requireAction(caller.principal, 'rbac', '*', 'read_role')
  const { cursor, limit, search } = input
  const matches = searchFor(search)
  const page = await deps.rbac.roles.page({ cursor, limit }, (r) => matches([r.id, r.name, r.description]))
  return { ...page, records: await deps.rbac.withPermissions(page.records) }
}
