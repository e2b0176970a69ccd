import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { MAX_LISTED } from './wire/rbac-schemas.js'
import { ListQuery, PermissionResponse, permissionResponse } from './wire/rbac-schemas.js'
import { listPermissions } from './list-permissions.js'

/** v1's permissions.listPermissions: a GET answering one list, not pages; `limit` caps it. */
export const listPermissionsV1 = v1Route({
  operation: 'permissions.listPermissions',
  method: 'GET',
  doc: { summary: 'List every permission', tag: 'permissions' },
  input: ListQuery('permissions'),
  answer: Type.Array(PermissionResponse, { description: `Every permission, oldest first (at most ${MAX_LISTED})` }),
  handle: async ({ limit = MAX_LISTED }, caller, deps) =>
    (await listPermissions(deps, caller, { limit })).records.map(permissionResponse),
})
