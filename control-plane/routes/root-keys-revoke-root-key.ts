import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireRootKeyManagement } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { RootKeyIdBody } from '../schemas/root-key-schemas.js'

/**
 * POST /v1/rootKeys.revokeRootKey: the root key is refused by every control plane from the next call on (each
 * call looks its root key up in the store). Any root key may revoke itself; another one takes rootkey.*.manage
 * and every permission of the root key revoked.
 */
export function registerRevokeRootKey(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/rootKeys.revokeRootKey',
    { schema: { body: RootKeyIdBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const principal = principalOf(request)
      const { rootKeyId } = request.body
      const itself = rootKeyId === principal.rootKeyId
      if (!itself) requireRootKeyManagement(principal)
      const target = await deps.rootKeys.get(rootKeyId)
      if (!itself) requireRootKeyManagement(principal, target.permissions)
      await deps.rootKeys.revoke({ rootKeyId: principal.rootKeyId, requestId: request.id }, rootKeyId)
      request.log.info({ revokedRootKeyId: rootKeyId, rootKeyId: principal.rootKeyId }, 'root key revoked')
      return {}
    },
  )
}
