import type { KeygateServer } from '../../shared/http/build-server.js'
import { notFound } from '../../shared/errors.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { allowedIdentity } from '../identity-access.js'
import { updateIdentity } from '../identity-operations.js'
import { toIdentityResponse } from '../identity-response.js'
import { checkMeta } from '../meta-limits.js'
import { namedLimitsOf } from '../named-limits.js'
import { principalOf, callerOf } from '../root-key-auth.js'
import { IdentityResponse, UpdateIdentityBody } from '../schemas/identity-schemas.js'

export function registerUpdateIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/identities.updateIdentity',
    { schema: { body: UpdateIdentityBody, response: { 200: IdentityResponse } } },
    async (request) => {
      const principal = principalOf(request)
      const { identityId, externalId, environment, meta, ratelimits } = request.body
      // Unkey's order: duplicate names and oversized meta are refused before the identity is looked up.
      const limits = ratelimits && namedLimitsOf(ratelimits)
      checkMeta(meta)
      const found = await allowedIdentity(deps.identities, principal, { identityId, externalId }, 'update_identity')
      if (identityId === undefined && environment !== undefined && environment !== 'default')
        throw notFound('identity', `identity ${externalId} not found`)
      return toIdentityResponse(
        await updateIdentity(deps, callerOf(request), found.doc.id, { meta, ratelimits: limits }),
      )
    },
  )
}
