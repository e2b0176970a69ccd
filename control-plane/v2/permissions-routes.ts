import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2, v2Pagination } from '../../shared/http/v2-route.js'
import type { PermissionRecord, RoleRecord } from '../../shared/rbac.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { searchFor } from '../index-page.js'
import { createPermission, deletePermission, readPermission } from '../permission-operations.js'
import type { Rbac } from '../rbac.js'
import { createRole, deleteRole, readRole, setRolePermissions } from '../role-operations.js'
import { principalOf, requireAction, callerOf } from '../root-key-auth.js'
import { V2_PAGE } from './list-body.js'
import {
  V2CreatePermissionBody,
  V2CreateRoleBody,
  V2ListPermissionsBody,
  V2ListRolesBody,
  V2Permission,
  V2PermissionBody,
  V2Role,
  V2RoleBody,
  V2SetRolePermissionsBody,
  bySlug,
  v2Permission,
  v2Role,
} from './permissions-schemas.js'

const Empty = Type.Object({}, { description: 'Nothing: it is gone' })

/** The permissions of `roles`, each read once however many of the roles grant it. */
async function withPermissions(rbac: Rbac, roles: readonly RoleRecord[]) {
  const reads = new Map<string, Promise<PermissionRecord | null>>()
  const read = (id: string) => {
    if (!reads.has(id)) reads.set(id, rbac.permissions.get(id))
    return reads.get(id)!
  }
  return Promise.all(roles.map(async (role) => v2Role(role, await Promise.all(role.permissionIds.map(read)))))
}

/** v2's permissions.* (Unkey's V2Permissions* schemas) over v1's operations (permission-, role-operations.ts). */
export function registerV2PermissionRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  registerV2(
    app,
    'permissions.createPermission',
    {
      body: V2CreatePermissionBody,
      data: Type.Object({ permissionId: Type.String({ description: "The new permission's id" }) }),
    },
    async (request) => ({ data: { permissionId: (await createPermission(deps, callerOf(request), request.body)).id } }),
  )

  registerV2(app, 'permissions.getPermission', { body: V2PermissionBody, data: V2Permission }, async (request) => ({
    data: v2Permission(await readPermission(deps, callerOf(request), request.body.permission, 'id-or-name')),
  }))

  registerV2(
    app,
    'permissions.listPermissions',
    {
      body: V2ListPermissionsBody,
      data: Type.Array(V2Permission, { description: 'Permissions, oldest first' }),
      paged: true,
    },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_permission')
      const { limit = V2_PAGE, cursor, search } = request.body
      const matches = searchFor(search)
      const page = await deps.rbac.permissions.page({ cursor, limit }, (p) =>
        matches([p.id, p.name, p.slug, p.description]),
      )
      return { data: page.records.map(v2Permission), pagination: v2Pagination(page.cursor) }
    },
  )

  registerV2(app, 'permissions.deletePermission', { body: V2PermissionBody, data: Empty }, async (request) => {
    await deletePermission(deps, callerOf(request), request.body.permission, 'id-or-name')
    return { data: {} }
  })

  registerV2(
    app,
    'permissions.createRole',
    { body: V2CreateRoleBody, data: Type.Object({ roleId: Type.String({ description: "The new role's id" }) }) },
    async (request) => ({ data: { roleId: (await createRole(deps, callerOf(request), request.body, 'v2')).id } }),
  )

  registerV2(app, 'permissions.getRole', { body: V2RoleBody, data: V2Role }, async (request) => {
    const role = await readRole(deps, callerOf(request), request.body.role, 'id-or-name')
    const [shown] = await withPermissions(deps.rbac, [role])
    return { data: shown! }
  })

  registerV2(
    app,
    'permissions.listRoles',
    { body: V2ListRolesBody, data: Type.Array(V2Role, { description: 'Roles, oldest first' }), paged: true },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_role')
      const { limit = V2_PAGE, cursor, search } = request.body
      const matches = searchFor(search)
      const page = await deps.rbac.roles.page({ cursor, limit }, (r) => matches([r.id, r.name, r.description]))
      return { data: await withPermissions(deps.rbac, page.records), pagination: v2Pagination(page.cursor) }
    },
  )

  registerV2(app, 'permissions.deleteRole', { body: V2RoleBody, data: Empty }, async (request) => {
    await deleteRole(deps, callerOf(request), request.body.role, 'id-or-name')
    return { data: {} }
  })

  registerV2(
    app,
    'permissions.setRolePermissions',
    {
      body: V2SetRolePermissionsBody,
      data: Type.Array(V2Permission, { description: 'The permissions the role grants now, in slug order' }),
    },
    async (request) => {
      const { roleId, permissions } = request.body
      const role = await setRolePermissions(deps, callerOf(request), roleId, permissions, 'v2')
      const granted = await Promise.all(role.permissionIds.map((id) => deps.rbac.permissions.get(id)))
      return {
        data: granted
          .flatMap((p) => (p ? [p] : []))
          .sort(bySlug)
          .map(v2Permission),
      }
    },
  )
}
