import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { LIMITS } from '../input-limits.js'
import { Description, PermissionRefBody, permissionRefsOf } from './wire/rbac-schemas.js'
import { createRole } from './create-role.js'

const CreateRoleBody = Type.Object(
  {
    name: Type.String({
      minLength: 3,
      maxLength: 512,
      description: "The role's name, unique: what keys.addRoles and createKey's `roles` name it by",
      examples: ['editor'],
    }),
    description: Type.Optional(Description('role')),
    permissions: Type.Optional(
      Type.Array(PermissionRefBody, {
        maxItems: LIMITS.namesPerKey,
        description: "Keygate's: the permissions the role grants (as permissions.setRolePermissions sets them)",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'auditor', description: 'Reads the books' }] },
)

/** v1's permissions.createRole: a permission not made yet is made only when marked `create: true`. */
export const createRoleV1 = v1Route({
  operation: 'permissions.createRole',
  method: 'POST',
  doc: { summary: 'Create a role', tag: 'permissions' },
  input: CreateRoleBody,
  answer: Type.Object({ roleId: Type.String({ description: 'The new role’s id' }) }),
  handle: async ({ name, description, permissions }, caller, deps) => {
    const input = { name, description, permissions: permissions && permissionRefsOf(permissions) }
    return { roleId: (await createRole(deps, caller, { ...input, missingPermissions: 'create-marked' })).id }
  },
})
