import { v2Route } from '../http/management-route.js'
import { DeletedData, V2PermissionBody } from './wire/permission-schemas.v2.js'
import { deletePermission } from './delete-permission.js'

/** v2's permissions.deletePermission: the permission named by its id or its slug. */
export const deletePermissionV2 = v2Route({
  operation: 'permissions.deletePermission',
  doc: { summary: 'Delete a permission: no key or role grants it any more', tag: 'v2 permissions' },
  body: V2PermissionBody,
  data: DeletedData,
  handle: async ({ permission }, caller, deps) => {
    await deletePermission(deps, caller, { permission, by: 'id-or-name' })
    return { data: {} }
  },
})
