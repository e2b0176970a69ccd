import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requireAction } from '../root-key-auth.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { DeleteIdentityBody } from '../schemas/identity-schemas.js'

export function registerDeleteIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/identities.deleteIdentity',
    { schema: { body: DeleteIdentityBody, response: { 200: EmptyResponse } } },
    async (request) => {
      const principal = principalOf(request)
      const { identityId } = request.body
      requireAction(principal, 'identity', identityId, 'delete_identity')
      // One write: its keys keep their externalId and, on every verifier within the bound, lose its meta and limits.
      const identity = await deps.identities.delete(identityId)
      request.log.info({ identityId, rootKeyId: principal.rootKeyId }, 'identity deleted')
      await deps.audit.record(request, 'identities.deleteIdentity', { before: { ...identity } })
      return {}
    },
  )
}
