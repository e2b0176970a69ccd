import { Type, type Static } from 'typebox'
import type { PermissionRecord, RoleRecord } from '../../shared/rbac.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from '../schemas/limits.js'
import { V2ListBody } from './list-body.js'

/** The wire shapes of v2's permissions.* (Unkey's V2Permissions*, `Permission` and `Role`). */

const SLUG = '^[a-zA-Z0-9_:\\-\\.\\*]+$'

const Slug = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: SLUG,
    description: `${description}: 1–128 of letters, digits and _ : - . *`,
    examples: ['documents.read'],
  })

const Description = (noun: string) =>
  Type.String({ maxLength: 512, description: `What the ${noun} is for: for your team; keys and clients never see it` })

const Slugs = (description: string) =>
  Type.Array(Slug('A permission slug'), {
    maxItems: LIMITS.namesPerKey,
    description: `${description}; one that does not exist is created when the root key has rbac.*.create_permission (at most ${LIMITS.namesPerKey})`,
  })

export const V2CreatePermissionBody = Type.Object(
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

export const V2PermissionBody = Type.Object(
  {
    permission: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: SLUG,
      description: 'The permission: its id (`perm_…`) or its slug',
      examples: [WIRE_EXAMPLES.permissionId],
    }),
  },
  { additionalProperties: false },
)

export const V2ListPermissionsBody = V2ListBody('permissions', 'id, name, slug or description')

export const V2CreateRoleBody = Type.Object(
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

export const V2RoleBody = Type.Object(
  {
    role: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'The role: its id (`role_…`) or its name',
      examples: [WIRE_EXAMPLES.roleId],
    }),
  },
  { additionalProperties: false },
)

export const V2ListRolesBody = V2ListBody('roles', 'id, name or description')

export const V2SetRolePermissionsBody = Type.Object(
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

export const V2Permission = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: 'Its name' }),
  slug: Type.String({ description: 'Its slug: what keys hold and verifyKey queries' }),
  description: Type.Optional(Type.String({ description: 'Its description, if it has one' })),
})

export const V2Role = Type.Object({
  id: Type.String({ description: "The role's id" }),
  name: Type.String({ description: 'Its name' }),
  description: Type.Optional(Type.String({ description: 'Its description, if it has one' })),
  permissions: Type.Optional(
    Type.Array(V2Permission, { description: 'The permissions it grants every key holding it, by slug' }),
  ),
})

/** A permission as v2 shows it: no description field when it has none (never null). */
export function v2Permission(permission: PermissionRecord): Static<typeof V2Permission> {
  const { id, name, slug, description } = permission
  return { id, name, slug, ...(description ? { description } : {}) }
}

/** A role as v2 shows it, with the permissions it grants that still exist, in slug order. */
export function v2Role(role: RoleRecord, permissions: readonly (PermissionRecord | null)[]): Static<typeof V2Role> {
  const { id, name, description } = role
  const granted = permissions.filter((permission) => permission !== null)
  return {
    id,
    name,
    ...(description ? { description } : {}),
    permissions: granted.sort(bySlug).map(v2Permission),
  }
}

export function bySlug(a: { slug: string }, b: { slug: string }): number {
  return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}
