import { Type } from 'typebox'
import { PERMISSION_NAME } from '../../shared/permission-query.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from './limits.js'

/** How many permissions or roles a workspace lists in one answer (Unkey's lists are not paged either). */
export const MAX_LISTED = 1_000

/** The wire shapes of permissions.*: Unkey's v1, plus setRolePermissions (v2's name) and a role's permissions. */

export const PermissionIdField = () =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.idLength,
    description: 'The permission: the `permissionId` that permissions.createPermission returned',
    examples: [WIRE_EXAMPLES.permissionId],
  })

export const RoleIdField = () =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.idLength,
    description: 'The role: the `roleId` that permissions.createRole returned',
    examples: [WIRE_EXAMPLES.roleId],
  })

const Description = (noun: string) =>
  Type.String({ maxLength: 512, description: `What the ${noun} is for: for your team; keys and clients never see it` })

export const Slug = (description: string) =>
  Type.String({
    pattern: PERMISSION_NAME.source,
    description: `${description}: 1–256 of letters, digits and _ . : * - /`,
  })

export const CreatePermissionBody = Type.Object(
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

export const PermissionResponse = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: 'Its name' }),
  slug: Type.String({ description: 'Its slug: what keys hold and verifyKey queries' }),
  description: Type.Optional(Type.String({ description: 'Its description' })),
})

/** A role's permission, or a key's: by id and slug. */
export const PermissionRef = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: "The permission's slug" }),
})

/** A permission named in a request: Unkey's {id?, name?, create?}, or a bare slug. */
export const PermissionRefBody = Type.Union([
  Slug('A permission slug'),
  Type.Object(
    {
      id: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.idLength, description: "The permission's id" })),
      name: Type.Optional(Slug("The permission's slug")),
      slug: Type.Optional(Slug("The permission's slug (same as `name`)")),
      create: Type.Optional(
        Type.Boolean({ description: 'Create it if no permission has this slug (needs rbac.*.create_permission)' }),
      ),
    },
    { additionalProperties: false },
  ),
])

export const CreateRoleBody = Type.Object(
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

export const RoleResponse = Type.Object({
  id: Type.String({ description: "The role's id" }),
  name: Type.String({ description: 'Its name' }),
  description: Type.Optional(Type.String({ description: 'Its description' })),
  permissions: Type.Array(PermissionRef, { description: 'The permissions it grants to every key holding it' }),
})

export const SetRolePermissionsBody = Type.Object(
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

/** listPermissions and listRoles: Unkey's take no query; Keygate's `limit` caps the answer. */
export const ListQuery = (noun: string) =>
  Type.Object({
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LISTED,
        description: `At most this many ${noun} (default ${MAX_LISTED})`,
      }),
    ),
  })
