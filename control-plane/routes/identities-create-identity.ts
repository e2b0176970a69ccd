import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { createIdentity } from '../identity-operations.js'
import { CreateIdentityBody } from '../schemas/identity-schemas.js'
import { callerOf } from '../root-key-auth.js'

export function registerCreateIdentity(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/identities.createIdentity',
    {
      schema: {
        body: CreateIdentityBody,
        response: { 200: Type.Object({ identityId: Type.String({ description: 'The new identity’s id' }) }) },
      },
    },
    async (request) => ({ identityId: (await createIdentity(deps, callerOf(request), request.body)).id }),
  )
}
