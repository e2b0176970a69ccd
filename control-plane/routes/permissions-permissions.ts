import { Type } from 'typebox'
import { badRequest } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { PERMISSION_NAME } from '../../shared/permission-query.js'
import type { PermissionRecord } from '../../shared/rbac.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { MAX_LISTED } from '../rbac.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { principalOf, requireAction } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { CreatePermissionBody, ListQuery, PermissionIdField, PermissionResponse } from '../schemas/rbac-schemas.js'

const shown = (permission: PermissionRecord) => ({
  id: permission.id,
  name: permission.name,
  slug: permission.slug,
  description: permission.description,
})

/** permissions.createPermission, getPermission, listPermissions, deletePermission. */
export function registerPermissionRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/permissions.createPermission',
    {
      schema: {
        body: CreatePermissionBody,
        response: { 200: Type.Object({ permissionId: Type.String({ description: 'The new permission’s id' }) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      requireAction(principal, 'rbac', '*', 'create_permission')
      const { name, slug, description } = request.body
      if (slug === undefined && !PERMISSION_NAME.test(name)) {
        throw badRequest(
          'name: is also the slug keys are granted by, so it must be 1–256 of letters, digits and _ . : * - / (or give a slug)',
        )
      }
      const permission = await deps.rbac.createPermission({ name, slug, description })
      request.log.info({ permissionId: permission.id, rootKeyId: principal.rootKeyId }, 'permission created')
      await deps.audit.record(request, 'permissions.createPermission', { after: { ...permission } })
      return { permissionId: permission.id }
    },
  )

  app.get(
    '/v1/permissions.getPermission',
    {
      schema: {
        querystring: Type.Object({ permissionId: PermissionIdField() }),
        response: { 200: PermissionResponse },
      },
    },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_permission')
      return shown(await deps.rbac.permissions.require(request.query.permissionId))
    },
  )

  app.get(
    '/v1/permissions.listPermissions',
    {
      schema: {
        querystring: ListQuery('permissions'),
        response: {
          200: Type.Array(PermissionResponse, {
            description: `Every permission, oldest first (at most ${MAX_LISTED})`,
          }),
        },
      },
    },
    async (request) => {
      requireAction(principalOf(request), 'rbac', '*', 'read_permission')
      return (await deps.rbac.permissions.list(request.query.limit ?? MAX_LISTED)).map(shown)
    },
  )

  app.post(
    '/v1/permissions.deletePermission',
    {
      schema: {
        body: Type.Object(
          { permissionId: PermissionIdField() },
          { additionalProperties: false, examples: [{ permissionId: WIRE_EXAMPLES.permissionId }] },
        ),
        response: { 200: EmptyResponse },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      requireAction(principal, 'rbac', '*', 'delete_permission')
      // One write: every key and role that referenced it stops granting it (references are resolved, not copied).
      const permission = await deps.rbac.permissions.delete(request.body.permissionId)
      request.log.info({ permissionId: permission.id, rootKeyId: principal.rootKeyId }, 'permission deleted')
      await deps.audit.record(request, 'permissions.deletePermission', { before: { ...permission } })
      return {}
    },
  )
}
