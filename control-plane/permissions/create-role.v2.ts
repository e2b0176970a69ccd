import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { CREATES } from '../openapi/v2-operations.js'
import { Description, Slugs } from './wire/permission-schemas.v2.js'
import { createRole } from './create-role.js'

const CreateRoleBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 128,
      description: "The role's name, unique: what keys.addRoles and createKey's `roles` name it by",
      examples: ['editor'],
    }),
    description: Type.Optional(Description('role')),
    permissions: Type.Optional(Slugs('The permissions the role grants, by slug')),
  },
  { additionalProperties: false },
)

/**
 * v2's permissions.createRole: permissions by slug, one not made yet made when the root key may; a name already
 * taken is refused before any is made.
 */
export const createRoleV2 = v2Route({
  operation: 'permissions.createRole',
  doc: { summary: 'Create a role', tag: 'v2 permissions', errors: CREATES },
  body: CreateRoleBody,
  data: Type.Object({ roleId: Type.String({ description: "The new role's id" }) }),
  handle: async (body, caller, deps) => ({
    data: { roleId: (await createRole(deps, caller, { ...body, missingPermissions: 'create-if-allowed' })).id },
  }),
})
