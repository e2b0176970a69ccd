import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { Description, Slug } from './wire/rbac-schemas.js'
import { createPermission } from './create-permission.js'

const CreatePermissionBody = Type.Object(
  {
    name: Type.String({
      minLength: 3,
      maxLength: 512,
      description: "The permission's name, unique; its slug unless `slug` is given",
      examples: ['documents.read'],
    }),
    slug: Type.Optional(
      Slug('What keys are granted and verifyKey queries name, unique (default: the name, which must then fit)'),
    ),
    description: Type.Optional(Description('permission')),
  },
  { additionalProperties: false, examples: [{ name: 'invoices.write', description: 'Create and change invoices' }] },
)

/** v1's permissions.createPermission: the slug defaults to the name. */
export const createPermissionV1 = v1Route({
  operation: 'permissions.createPermission',
  method: 'POST',
  doc: { summary: 'Create a permission (keys are granted it by slug)', tag: 'permissions' },
  input: CreatePermissionBody,
  answer: Type.Object({ permissionId: Type.String({ description: 'The new permission’s id' }) }),
  handle: async (body, caller, deps) => ({ permissionId: (await createPermission(deps, caller, body)).id }),
})
