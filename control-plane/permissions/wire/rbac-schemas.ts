import { Type, type Static } from 'typebox'
import { PERMISSION_NAME } from '../../../shared/verification/permission-query.js'
import type { PermissionRecord } from '../../../shared/rbac.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { RecordRef, RoleWithPermissions } from '../rbac.js'
import { LIMITS } from '../../input-limits.js'

/** How many permissions or roles a workspace lists in one answer (Unkey's lists are not paged either). */
export const MAX_LISTED = 1_000

/** The wire shapes v1's permissions.* share (each call's own body is in its adapter, control-plane/permissions/). */

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

export const Description = (noun: string) =>
  Type.String({ maxLength: 512, description: `What the ${noun} is for: for your team; keys and clients never see it` })

export const Slug = (description: string) =>
  Type.String({
    pattern: PERMISSION_NAME.source,
    description: `${description}: 1–256 of letters, digits and _ . : * - /`,
  })

export const PermissionResponse = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: 'Its name' }),
  slug: Type.String({ description: 'Its slug: what keys hold and verifyKey queries' }),
  description: Type.Optional(Type.String({ description: 'Its description' })),
})

/** A permission as v1 shows it. */
export function permissionResponse(permission: PermissionRecord): Static<typeof PermissionResponse> {
  return { id: permission.id, name: permission.name, slug: permission.slug, description: permission.description }
}

/** A role's permission, or a key's: by id and slug. */
export const PermissionRef = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: "The permission's slug" }),
})

/** Permissions as a role shows them (PermissionRef), in the order given. */
export function permissionRefs(permissions: readonly PermissionRecord[]): Static<typeof PermissionRef>[] {
  return permissions.map((permission) => ({ id: permission.id, name: permission.slug }))
}

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

/** The permissions a request names, as rbac.ts resolves them: a `slug` is the `name` it stands for. */
export function permissionRefsOf(body: readonly Static<typeof PermissionRefBody>[]): (RecordRef | string)[] {
  return body.map((ref) =>
    typeof ref === 'string' ? ref : { id: ref.id, name: ref.slug ?? ref.name, create: ref.create },
  )
}

export const RoleResponse = Type.Object({
  id: Type.String({ description: "The role's id" }),
  name: Type.String({ description: 'Its name' }),
  description: Type.Optional(Type.String({ description: 'Its description' })),
  permissions: Type.Array(PermissionRef, { description: 'The permissions it grants to every key holding it' }),
})

/** A role as v1 shows it: with the permissions it grants that still exist. */
export function roleResponse({ role, permissions }: RoleWithPermissions): Static<typeof RoleResponse> {
  return { id: role.id, name: role.name, description: role.description, permissions: permissionRefs(permissions) }
}

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
