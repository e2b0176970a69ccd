import { newId } from '../../shared/ids.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { CreateApiBody } from '../schemas/api-schemas.js'
import { Type } from 'typebox'

export function registerCreateApi(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post(
    '/v1/apis.createApi',
    {
      schema: {
        body: CreateApiBody,
        response: {
          200: Type.Object({
            apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
            name: Type.String({ description: 'Its name' }),
          }),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      requirePermission(principal, '*', 'create_api')
      const api = { id: newId('api', deps.clock.now()), name: request.body.name, createdAt: deps.clock.now() }
      await deps.store.createApi(api)
      await deps.audit.record(request, 'apis.createApi', { apiId: api.id, after: { id: api.id, name: api.name } })
      request.log.info({ apiId: api.id, rootKeyId: principal.rootKeyId }, 'api created')
      return { apiId: api.id, name: api.name }
    },
  )
}
