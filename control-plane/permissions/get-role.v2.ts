import { v2Route } from '../http/management-route.js'
import { V2Role, V2RoleBody, v2Role } from './wire/permission-schemas.v2.js'
import { getRole } from './get-role.js'

/** v2's permissions.getRole: the role named by its id or its name, its permissions in slug order. */
export const getRoleV2 = v2Route({
  operation: 'permissions.getRole',
  doc: { summary: 'Read a role and the permissions it grants, by its id or name', tag: 'v2 permissions' },
  body: V2RoleBody,
  data: V2Role,
  handle: async ({ role }, caller, deps) => ({
    data: v2Role(await getRole(deps, caller, { role, by: 'id-or-name' })),
  }),
})
