import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { PermissionRecord } from '../../shared/rbac.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { createPermission, deletePermission, readPermission } from '../permission-operations.js'
import { MAX_LISTED } from '../rbac.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { principalOf, requireAction, callerOf } from '../root-key-auth.js'
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
    async (request) => ({ permissionId: (await createPermission(deps, callerOf(request), request.body)).id }),
  )

  app.get(
    '/v1/permissions.getPermission',
    {
      schema: {
        querystring: Type.Object({ permissionId: PermissionIdField() }),
        response: { 200: PermissionResponse },
      },
    },
    async (request) => shown(await readPermission(deps, callerOf(request), request.query.permissionId, 'id')),
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
      await deletePermission(deps, callerOf(request), request.body.permissionId, 'id')
      return {}
    },
  )
}
