import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { allowedIdentity } from '../identity-access.js'
import { toIdentityResponse } from '../identity-response.js'
import { principalOf } from '../root-key-auth.js'
import { IdentityQuery, IdentityResponse } from '../schemas/identity-schemas.js'

export function registerGetIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/identities.getIdentity',
    { schema: { querystring: IdentityQuery, response: { 200: IdentityResponse } } },
    async (request) => {
      const found = await allowedIdentity(deps.identities, principalOf(request), request.query, 'read_identity')
      return toIdentityResponse(found.doc)
    },
  )
}
