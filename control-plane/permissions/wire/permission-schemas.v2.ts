import { Type, type Static } from 'typebox'
import type { PermissionRecord } from '../../../shared/rbac.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { RoleWithPermissions } from '../rbac.js'
import { LIMITS } from '../../input-limits.js'

/** The wire shapes v2's permissions.* share (Unkey's `Permission`, `Role`); each call's own body is in its adapter. */

const SLUG = '^[a-zA-Z0-9_:\\-\\.\\*]+$'

export const Slug = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: SLUG,
    description: `${description}: 1–128 of letters, digits and _ : - . *`,
    examples: ['documents.read'],
  })

export const Description = (noun: string) =>
  Type.String({ maxLength: 512, description: `What the ${noun} is for: for your team; keys and clients never see it` })

export const Slugs = (description: string) =>
  Type.Array(Slug('A permission slug'), {
    maxItems: LIMITS.namesPerKey,
    description: `${description}; one that does not exist is created when the root key has rbac.*.create_permission (at most ${LIMITS.namesPerKey})`,
  })

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

/** The answer of a delete. */
export const DeletedData = Type.Object({}, { description: 'Nothing: it is gone' })

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

/** Permissions as v2 shows a role's: in slug order. */
export function v2PermissionsBySlug(permissions: readonly PermissionRecord[]): Static<typeof V2Permission>[] {
  return [...permissions].sort(bySlug).map(v2Permission)
}

/** A role as v2 shows it, with the permissions it grants that still exist, in slug order. */
export function v2Role({ role, permissions }: RoleWithPermissions): Static<typeof V2Role> {
  const { id, name, description } = role
  return { id, name, ...(description ? { description } : {}), permissions: v2PermissionsBySlug(permissions) }
}

function bySlug(a: { slug: string }, b: { slug: string }): number {
  return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}
