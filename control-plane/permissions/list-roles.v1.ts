import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { MAX_LISTED } from './wire/rbac-schemas.js'
import { ListQuery, RoleResponse, roleResponse } from './wire/rbac-schemas.js'
import { listRoles } from './list-roles.js'

/** v1's permissions.listRoles: a GET answering one list, not pages; `limit` caps it. */
export const listRolesV1 = v1Route({
  operation: 'permissions.listRoles',
  method: 'GET',
  doc: { summary: 'List every role', tag: 'permissions' },
  input: ListQuery('roles'),
  answer: Type.Array(RoleResponse, { description: `Every role, oldest first (at most ${MAX_LISTED})` }),
  handle: async ({ limit = MAX_LISTED }, caller, deps) =>
    (await listRoles(deps, caller, { limit })).records.map(roleResponse),
})
