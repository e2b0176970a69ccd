import { v2Route } from '../http/management-route.js'
import { V2Permission, V2PermissionBody, v2Permission } from './wire/permission-schemas.v2.js'
import { getPermission } from './get-permission.js'

/** v2's permissions.getPermission: the permission named by its id or its slug. */
export const getPermissionV2 = v2Route({
  operation: 'permissions.getPermission',
  doc: { summary: 'Read a permission by its id or slug', tag: 'v2 permissions' },
  body: V2PermissionBody,
  data: V2Permission,
  handle: async ({ permission }, caller, deps) => ({
    data: v2Permission(await getPermission(deps, caller, { permission, by: 'id-or-name' })),
  }),
})
