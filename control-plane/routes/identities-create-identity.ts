import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { checkMeta } from '../meta-limits.js'
import { namedLimitsOf } from '../named-limits.js'
import { principalOf, requireAction } from '../root-key-auth.js'
import { CreateIdentityBody } from '../schemas/identity-schemas.js'

export function registerCreateIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/identities.createIdentity',
    {
      schema: {
        body: CreateIdentityBody,
        response: { 200: Type.Object({ identityId: Type.String({ description: 'The new identity’s id' }) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      requireAction(principal, 'identity', '*', 'create_identity')
      const { externalId, meta, ratelimits } = request.body
      checkMeta(meta)
      const identity = await deps.identities.create({
        externalId,
        meta,
        ratelimits: ratelimits && namedLimitsOf(ratelimits),
      })
      request.log.info({ identityId: identity.id, rootKeyId: principal.rootKeyId }, 'identity created')
      await deps.audit.record(request, 'identities.createIdentity', { after: { ...identity } })
      return { identityId: identity.id }
    },
  )
}
