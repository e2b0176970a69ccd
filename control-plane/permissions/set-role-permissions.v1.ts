import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { LIMITS } from '../input-limits.js'
import { PermissionRef, PermissionRefBody, RoleIdField, permissionRefs, permissionRefsOf } from './wire/rbac-schemas.js'
import { setRolePermissions } from './set-role-permissions.js'

const SetRolePermissionsBody = Type.Object(
  {
    roleId: RoleIdField(),
    permissions: Type.Array(PermissionRefBody, {
      maxItems: LIMITS.namesPerKey,
      description: 'The permissions the role grants from now on, replacing its own ([] grants none)',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ roleId: WIRE_EXAMPLES.roleId, permissions: [{ name: 'documents.read', create: true }] }],
  },
)

/**
 * Keygate's v1 permissions.setRolePermissions (v2's name): the role's 404 before the root key's rights, removal
 * asked only of a role that grants something, a permission not made yet made only when marked `create: true`.
 */
export const setRolePermissionsV1 = v1Route({
  operation: 'permissions.setRolePermissions',
  method: 'POST',
  doc: {
    summary: 'Replace the permissions a role grants (every key holding it follows)',
    description:
      "Unkey's v1 has no call for this (its dashboard did it); the name is v2's. Every verifier applies the change within the revocation bound.",
    tag: 'permissions',
  },
  input: SetRolePermissionsBody,
  answer: Type.Array(PermissionRef, { description: 'The permissions the role grants now' }),
  handle: async ({ roleId, permissions }, caller, deps) => {
    const input = { roleId, permissions: permissionRefsOf(permissions) }
    const rule = { actionsNeeded: 'remove-if-granted', missingPermissions: 'create-marked' } as const
    return permissionRefs((await setRolePermissions(deps, caller, { ...input, ...rule })).permissions)
  },
})
