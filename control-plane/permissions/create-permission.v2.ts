import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { CREATES } from '../openapi/v2-operations.js'
import { Description, Slug } from './wire/permission-schemas.v2.js'
import { createPermission } from './create-permission.js'

const CreatePermissionBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 512,
      description: "The permission's name",
      examples: ['Read documents'],
    }),
    slug: Slug('What keys are granted and verifyKey queries name, unique'),
    description: Type.Optional(Description('permission')),
  },
  { additionalProperties: false },
)

/** v2's permissions.createPermission: the slug is required. */
export const createPermissionV2 = v2Route({
  operation: 'permissions.createPermission',
  doc: { summary: 'Create a permission (keys are granted it by slug)', tag: 'v2 permissions', errors: CREATES },
  body: CreatePermissionBody,
  data: Type.Object({ permissionId: Type.String({ description: "The new permission's id" }) }),
  handle: async (body, caller, deps) => ({ data: { permissionId: (await createPermission(deps, caller, body)).id } }),
})
