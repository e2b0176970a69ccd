import { Type } from 'typebox'
import { v2Pagination } from '../../shared/http/v2-route.js'
import { v2Route } from '../http/management-route.js'
import { NAMES_NO_RECORD } from '../openapi/v2-operations.js'
import { V2_PAGE, V2ListBody } from '../wire/list-body.v2.js'
import { V2Permission, v2Permission } from './wire/permission-schemas.v2.js'
import { listPermissions } from './list-permissions.js'

/** v2's permissions.listPermissions: pages (`cursor`), filtered by `search`. */
export const listPermissionsV2 = v2Route({
  operation: 'permissions.listPermissions',
  doc: { summary: 'List permissions, a page at a time', tag: 'v2 permissions', errors: NAMES_NO_RECORD },
  body: V2ListBody('permissions', 'id, name, slug or description'),
  data: Type.Array(V2Permission, { description: 'Permissions, oldest first' }),
  paged: true,
  handle: async ({ limit = V2_PAGE, cursor, search }, caller, deps) => {
    const page = await listPermissions(deps, caller, { limit, cursor, search })
    return { data: page.records.map(v2Permission), pagination: v2Pagination(page.cursor) }
  },
})
