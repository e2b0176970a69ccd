import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { Slugs, V2Permission, v2PermissionsBySlug } from './wire/permission-schemas.v2.js'
import { setRolePermissions } from './set-role-permissions.js'

const SetRolePermissionsBody = Type.Object(
  {
    roleId: Type.String({
      minLength: 3,
      maxLength: 255,
      pattern: '^[a-zA-Z0-9_-]+$',
      description: 'The role, by id',
      examples: [WIRE_EXAMPLES.roleId],
    }),
    permissions: Slugs('The permissions the role grants from now on, by slug, replacing its own ([] grants none)'),
  },
  { additionalProperties: false },
)

/**
 * v2's permissions.setRolePermissions: both rbac actions on roles asked up front, whatever the role holds (Unkey's
 * v2); a slug not made yet made when the root key may. The answer lists the permissions in slug order.
 */
export const setRolePermissionsV2 = v2Route({
  operation: 'permissions.setRolePermissions',
  doc: {
    summary: 'Replace the permissions a role grants (every key holding it follows)',
    description: 'Every verifier applies the change within the revocation bound.',
    tag: 'v2 permissions',
  },
  body: SetRolePermissionsBody,
  data: Type.Array(V2Permission, { description: 'The permissions the role grants now, in slug order' }),
  handle: async (body, caller, deps) => {
    const rule = { actionsNeeded: 'add-and-remove', missingPermissions: 'create-if-allowed' } as const
    const { permissions } = await setRolePermissions(deps, caller, { ...body, ...rule })
    return { data: v2PermissionsBySlug(permissions) }
  },
})
