import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { RoleRecord } from '../../shared/rbac.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { MAX_LISTED, type RecordRef, type Rbac } from '../rbac.js'
import { createRole, deleteRole, readRole, setRolePermissions } from '../role-operations.js'
import { principalOf, requireAction, callerOf } from '../root-key-auth.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import {
  CreateRoleBody,
  ListQuery,
  PermissionRef,
  RoleIdField,
  RoleResponse,
  SetRolePermissionsBody,
} from '../schemas/rbac-schemas.js'

type PermissionRefBody = string | (RecordRef & { slug?: string })

/** A role as the wire shows it: with the permissions it grants that still exist. */
async function shown(rbac: Rbac, role: RoleRecord) {
  const permissions = await Promise.all(role.permissionIds.map((id) => rbac.permissions.get(id)))
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    permissions: permissions.flatMap((permission) =>
      permission ? [{ id: permission.id, name: permission.slug }] : [],
    ),
  }
}

function refsOf(body: PermissionRefBody[]): (RecordRef | string)[] {
  return body.map((ref) =>
    typeof ref === 'string' ? ref : { id: ref.id, name: ref.slug ?? ref.name, create: ref.create },
  )
}

/** permissions.createRole, getRole, listRoles, deleteRole, setRolePermissions. */
export function registerRoleRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/permissions.createRole',
    {
      schema: {
        body: CreateRoleBody,
        response: { 200: Type.Object({ roleId: Type.String({ description: 'The new role’s id' }) }) },
      },
    },
    async (request) => {
      const { name, description, permissions } = request.body
      const refs = permissions && refsOf(permissions)
      return { roleId: (await createRole(deps, callerOf(request), { name, description, permissions: refs }, 'v1')).id }
    },
  )

  app.get(
    '/v1/permissions.getRole',
    { schema: { querystring: Type.Object({ roleId: RoleIdField() }), response: { 200: RoleResponse } } },
    async (request) => shown(deps.rbac, await readRole(deps, callerOf(request), request.query.roleId, 'id')),
  )

  app.get(
    '/v1/permissions.listRoles',
    {
      schema: {
        querystring: ListQuery('roles'),
        response: {
          200: Type.Array(RoleResponse, { description: `Every role, oldest first (at most ${MAX_LISTED})` }),
        },
      },
    },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_role')
      const roles = await deps.rbac.roles.list(request.query.limit ?? MAX_LISTED)
      return Promise.all(roles.map((role) => shown(deps.rbac, role)))
    },
  )

  app.post(
    '/v1/permissions.deleteRole',
    {
      schema: {
        body: Type.Object(
          { roleId: RoleIdField() },
          { additionalProperties: false, examples: [{ roleId: WIRE_EXAMPLES.roleId }] },
        ),
        response: { 200: EmptyResponse },
      },
    },
    async (request) => {
      await deleteRole(deps, callerOf(request), request.body.roleId, 'id')
      return {}
    },
  )

  app.post(
    '/v1/permissions.setRolePermissions',
    {
      schema: {
        body: SetRolePermissionsBody,
        response: { 200: Type.Array(PermissionRef, { description: 'The permissions the role grants now' }) },
      },
    },
    async (request) => {
      const { roleId, permissions } = request.body
      const role = await setRolePermissions(deps, callerOf(request), roleId, refsOf(permissions), 'v1')
      return (await shown(deps.rbac, role)).permissions
    },
  )
}
