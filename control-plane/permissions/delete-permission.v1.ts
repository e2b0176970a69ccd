import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { EmptyResponse } from '../wire/fields.js'
import { PermissionIdField } from './wire/rbac-schemas.js'
import { deletePermission } from './delete-permission.js'

const DeletePermissionBody = Type.Object(
  { permissionId: PermissionIdField() },
  { additionalProperties: false, examples: [{ permissionId: WIRE_EXAMPLES.permissionId }] },
)

/** v1's permissions.deletePermission: the permission named by its id. */
export const deletePermissionV1 = v1Route({
  operation: 'permissions.deletePermission',
  method: 'POST',
  doc: { summary: 'Delete a permission: no key or role grants it any more', tag: 'permissions' },
  input: DeletePermissionBody,
  answer: EmptyResponse,
  handle: async ({ permissionId }, caller, deps) => {
    await deletePermission(deps, caller, { permission: permissionId, by: 'id' })
    return {}
  },
})
