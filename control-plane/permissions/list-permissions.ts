import type { PermissionRecord } from '../../shared/rbac.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { searchFor, type PageOptions, type RecordPage } from '../index-page.js'
import { requireAction } from '../root-keys/root-key-auth.js'

/** A page of permissions: `search`, when given, keeps those whose id, name, slug or description contains it. */
export interface ListPermissionsInput extends PageOptions {
  search?: string
}

/** A page of permissions, oldest first, if the root key may read permissions. */
export async function listPermissions(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListPermissionsInput,
): Promise<RecordPage<PermissionRecord>> {
  requireAction(caller.principal, 'rbac', '*', 'read_permission')
  const { cursor, limit, search } = input
  const matches = searchFor(search)
  return deps.rbac.permissions.page({ cursor, limit }, (p) => matches([p.id, p.name, p.slug, p.description]))
}
