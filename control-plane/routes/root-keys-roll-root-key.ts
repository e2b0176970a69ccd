import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireRootKeyManagement } from '../root-key-auth.js'
import { NewRootKeyResponse, RootKeyIdBody } from '../schemas/root-key-schemas.js'

/**
 * POST /v1/rootKeys.rollRootKey: a new root key with the same name and permissions, and the old one revoked at
 * once, in one step. No grace period: a roll is for a root key that may have leaked, and a leaked key must stop
 * now; for a rotation without downtime, create a second root key, move to it, then revoke the first.
 */
export function registerRollRootKey(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/rootKeys.rollRootKey',
    { schema: { body: RootKeyIdBody, response: { 200: NewRootKeyResponse } } },
    async (request) => {
      const principal = principalOf(request)
      requireRootKeyManagement(principal)
      const target = await deps.rootKeys.get(request.body.rootKeyId)
      requireRootKeyManagement(principal, target.permissions)
      const { record, key } = await deps.rootKeys.roll(
        { rootKeyId: principal.rootKeyId, requestId: request.id },
        target.id,
      )
      request.log.info(
        { revokedRootKeyId: target.id, newRootKeyId: record.id, rootKeyId: principal.rootKeyId },
        'root key rolled',
      )
      return { rootKeyId: record.id, key }
    },
  )
}
