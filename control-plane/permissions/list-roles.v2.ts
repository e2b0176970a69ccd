import { Type } from 'typebox'
import { v2Pagination } from '../../shared/http/v2-route.js'
import { v2Route } from '../http/management-route.js'
import { NAMES_NO_RECORD } from '../openapi/v2-operations.js'
import { V2_PAGE, V2ListBody } from '../wire/list-body.v2.js'
import { V2Role, v2Role } from './wire/permission-schemas.v2.js'
import { listRoles } from './list-roles.js'

/** v2's permissions.listRoles: pages (`cursor`), filtered by `search`, each role with its permissions. */
export const listRolesV2 = v2Route({
  operation: 'permissions.listRoles',
  doc: { summary: 'List roles, a page at a time', tag: 'v2 permissions', errors: NAMES_NO_RECORD },
  body: V2ListBody('roles', 'id, name or description'),
  data: Type.Array(V2Role, { description: 'Roles, oldest first' }),
  paged: true,
  handle: async ({ limit = V2_PAGE, cursor, search }, caller, deps) => {
    const page = await listRoles(deps, caller, { limit, cursor, search })
    return { data: page.records.map(v2Role), pagination: v2Pagination(page.cursor) }
  },
})
