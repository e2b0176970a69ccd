import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { PermissionIdField, PermissionResponse, permissionResponse } from './wire/rbac-schemas.js'
import { getPermission } from './get-permission.js'

/** v1's permissions.getPermission: a GET, the permission named by its id. */
export const getPermissionV1 = v1Route({
  operation: 'permissions.getPermission',
  method: 'GET',
  doc: { summary: 'Read a permission', tag: 'permissions' },
  input: Type.Object({ permissionId: PermissionIdField() }),
  answer: PermissionResponse,
  handle: async ({ permissionId }, caller, deps) =>
    permissionResponse(await getPermission(deps, caller, { permission: permissionId, by: 'id' })),
})
