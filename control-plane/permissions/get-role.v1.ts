import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { RoleIdField, RoleResponse, roleResponse } from './wire/rbac-schemas.js'
import { getRole } from './get-role.js'

/** v1's permissions.getRole: a GET, the role named by its id. */
export const getRoleV1 = v1Route({
  operation: 'permissions.getRole',
  method: 'GET',
  doc: { summary: 'Read a role and the permissions it grants', tag: 'permissions' },
  input: Type.Object({ roleId: RoleIdField() }),
  answer: RoleResponse,
  handle: async ({ roleId }, caller, deps) => roleResponse(await getRole(deps, caller, { role: roleId, by: 'id' })),
})
