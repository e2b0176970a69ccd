import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EmptyResponse } from '../wire/fields.js'
import { RoleIdField } from './wire/rbac-schemas.js'
import { deleteRole } from './delete-role.js'

const DeleteRoleBody = Type.Object(
  { roleId: RoleIdField() },
  { additionalProperties: false, examples: [{ roleId: WIRE_EXAMPLES.roleId }] },
)

/** v1's permissions.deleteRole: the role named by its id. */
export const deleteRoleV1 = v1Route({
  operation: 'permissions.deleteRole',
  method: 'POST',
  doc: { summary: 'Delete a role: its keys lose what it granted', tag: 'permissions' },
  input: DeleteRoleBody,
  answer: EmptyResponse,
  handle: async ({ roleId }, caller, deps) => {
    await deleteRole(deps, caller, { role: roleId, by: 'id' })
    return {}
  },
})
