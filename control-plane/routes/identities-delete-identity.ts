import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { deleteIdentity } from '../identity-operations.js'
import { principalOf, requireAction, callerOf } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { DeleteIdentityBody } from '../schemas/identity-schemas.js'

export function registerDeleteIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/identities.deleteIdentity',
    { schema: { body: DeleteIdentityBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const { identityId } = request.body
      requireAction(principalOf(request), 'identity', identityId, 'delete_identity')
      await deleteIdentity(deps, callerOf(request), identityId)
      return {}
    },
  )
}
