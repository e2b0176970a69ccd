import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { RoleRecord } from '../../shared/rbac.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { MAX_LISTED, type RecordRef, type Rbac } from '../rbac.js'
import { may, principalOf, requireAction, type Principal } from '../root-key-auth.js'
import { ApiError } from '../../shared/errors.js'
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

/** The permissions a role is given: Unkey's rbac actions on roles. */
function allowRolePermissions(principal: Principal, removes: boolean): void {
  const needed = ['add_permission_to_role', ...(removes ? ['remove_permission_from_role' as const] : [])] as const
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((a) => `rbac.*.${a}`).join(' and ')}`,
    )
  }
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
      const principal = principalOf(request)
      requireAction(principal, 'rbac', '*', 'create_role')
      const { name, description, permissions } = request.body
      if (permissions?.length) allowRolePermissions(principal, false)
      const permissionIds = permissions?.length
        ? await deps.rbac.permissionIdsOf(refsOf(permissions), principal, false)
        : undefined
      const role = await deps.rbac.createRole({ name, description, permissionIds })
      request.log.info({ roleId: role.id, rootKeyId: principal.rootKeyId }, 'role created')
      await deps.audit.record(request, 'permissions.createRole', { after: { ...role } })
      return { roleId: role.id }
    },
  )

  app.get(
    '/v1/permissions.getRole',
    { schema: { querystring: Type.Object({ roleId: RoleIdField() }), response: { 200: RoleResponse } } },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_role')
      return shown(deps.rbac, await deps.rbac.roles.require(request.query.roleId))
    },
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
      const principal = principalOf(request)
      requireAction(principal, 'rbac', '*', 'delete_role')
      // One write: every key holding the role stops being granted its permissions.
      const role = await deps.rbac.roles.delete(request.body.roleId)
      request.log.info({ roleId: role.id, rootKeyId: principal.rootKeyId }, 'role deleted')
      await deps.audit.record(request, 'permissions.deleteRole', { before: { ...role } })
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
      const principal = principalOf(request)
      const { roleId, permissions } = request.body
      const before = await deps.rbac.roles.require(roleId)
      allowRolePermissions(principal, before.permissionIds.length > 0)
      const permissionIds = await deps.rbac.permissionIdsOf(refsOf(permissions), principal, false)
      // One write: every key holding the role is granted exactly these from its next verification on.
      const role = await deps.rbac.setRolePermissions(roleId, permissionIds)
      request.log.info(
        { roleId, permissions: role.permissionIds.length, rootKeyId: principal.rootKeyId },
        'role permissions set',
      )
      await deps.audit.record(request, 'permissions.setRolePermissions', { before: { ...before }, after: { ...role } })
      return (await shown(deps.rbac, role)).permissions
    },
  )
}
