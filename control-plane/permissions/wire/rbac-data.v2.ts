import { Type, type Static } from 'typebox'
import type { PermissionRecord, RoleRecord } from '../../../shared/rbac.js'
import type { Rbac } from '../rbac.js'

/** Unkey v2's `Permission`: `description` is left out when there is none (never null). */
export const V2Permission = Type.Object({
  id: Type.String({ description: "The permission's id" }),
  name: Type.String({ description: 'Its name' }),
  slug: Type.String({ description: 'Its slug: what keys are granted and verifyKey queries name' }),
  description: Type.Optional(Type.String({ description: 'What it grants, when it was given a description' })),
})
export type V2Permission = Static<typeof V2Permission>

/** Unkey v2's `Role`: `permissions` (those it grants) is left out when it grants none, as Unkey leaves it out. */
export const V2Role = Type.Object({
  id: Type.String({ description: "The role's id" }),
  name: Type.String({ description: 'Its name' }),
  description: Type.Optional(Type.String({ description: 'What it is for, when it was given a description' })),
  permissions: Type.Optional(Type.Array(V2Permission, { description: 'The permissions it grants' })),
})
export type V2Role = Static<typeof V2Role>

export function permissionData(permission: PermissionRecord): V2Permission {
  return {
    id: permission.id,
    name: permission.name,
    slug: permission.slug,
    ...(permission.description ? { description: permission.description } : {}),
  }
}

/** The permissions `ids` name that still exist, in the given order (a deleted one's id may linger). */
export async function permissionsData(rbac: Rbac, ids: readonly string[]): Promise<V2Permission[]> {
  const records = await Promise.all(ids.map((id) => rbac.permissions.get(id)))
  return records.flatMap((record) => (record ? [permissionData(record)] : []))
}

export async function roleData(rbac: Rbac, role: RoleRecord): Promise<V2Role> {
  const permissions = await permissionsData(rbac, role.permissionIds)
  return {
    id: role.id,
    name: role.name,
    ...(role.description ? { description: role.description } : {}),
    ...(permissions.length > 0 ? { permissions } : {}),
  }
}

/** The roles `ids` name that still exist, in the order given. */
export async function rolesData(rbac: Rbac, ids: readonly string[]): Promise<V2Role[]> {
  const records = await Promise.all(ids.map((id) => rbac.roles.get(id)))
  return Promise.all(records.flatMap((record) => (record ? [roleData(rbac, record)] : [])))
}
