import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireRootKeyManagement } from '../root-key-auth.js'
import { CreateRootKeyBody, NewRootKeyResponse } from '../schemas/root-key-schemas.js'

/**
 * POST /v1/rootKeys.createRootKey (Keygate's own, in v1 style): a root key with rootkey.*.manage makes another,
 * with at most its own permissions. The key is in the answer once; only its hash is stored.
 */
export function registerCreateRootKey(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/rootKeys.createRootKey',
    { schema: { body: CreateRootKeyBody, response: { 200: NewRootKeyResponse } } },
    async (request) => {
      const principal = principalOf(request)
      requireRootKeyManagement(principal, request.body.permissions)
      const { record, key } = await deps.rootKeys.create(
        { rootKeyId: principal.rootKeyId, requestId: request.id },
        request.body,
      )
      request.log.info({ newRootKeyId: record.id, rootKeyId: principal.rootKeyId }, 'root key created')
      return { rootKeyId: record.id, key }
    },
  )
}
