import { v2Route } from '../http/management-route.js'
import { DeletedData, V2RoleBody } from './wire/permission-schemas.v2.js'
import { deleteRole } from './delete-role.js'

/** v2's permissions.deleteRole: the role named by its id or its name. */
export const deleteRoleV2 = v2Route({
  operation: 'permissions.deleteRole',
  doc: { summary: 'Delete a role: its keys lose what it granted', tag: 'v2 permissions' },
  body: V2RoleBody,
  data: DeletedData,
  handle: async ({ role }, caller, deps) => {
    await deleteRole(deps, caller, { role, by: 'id-or-name' })
    return { data: {} }
  },
})
