import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { updateKey } from '../key-update.js'
import type { RecordRef } from '../rbac.js'
import { allowKeyGrants, takesAway } from '../key-grants.js'
import { EmptyResponse, UpdateKeyBody } from '../schemas/key-schemas.js'
import { callerOf } from '../root-key-auth.js'

export function registerUpdateKey(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/keys.updateKey',
    { schema: { body: UpdateKeyBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const { keyId, permissions, roles, ...changes } = request.body
      await updateKey(deps, writes, callerOf(request), keyId, changes, {
        // Unkey's: changing a key's permissions or roles needs the rbac actions for it, as keys.addPermissions does
        // (checked before anything named is created; taking some away also needs the remove action, checked below).
        check: (_current, principal) => {
          if (permissions?.length) allowKeyGrants(principal, 'permissions', true, false)
          if (roles?.length) allowKeyGrants(principal, 'roles', true, false)
        },
        resolve: async (current, principal) => {
          // A bare name is created when missing, as keys.createKey does; Unkey's {name} only with `create: true`.
          const permissionIds =
            permissions && (await deps.rbac.permissionIdsOf(permissions.map(named), principal, false))
          const roleIds = roles && (await deps.rbac.roleIdsOf(roles.map(named), principal, false))
          if (permissionIds && takesAway(current.permissionIds, permissionIds)) {
            allowKeyGrants(principal, 'permissions', false, true)
          }
          if (roleIds && takesAway(current.roleIds, roleIds)) allowKeyGrants(principal, 'roles', false, true)
          return { permissionIds, roleIds }
        },
      })
      return {}
    },
  )
}

function named(ref: string | RecordRef): RecordRef {
  return typeof ref === 'string' ? { name: ref, create: true } : ref
}
