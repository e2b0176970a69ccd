import type { KeygateServer } from '../../shared/http/build-server.js'
import { createApi } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { CreateApiBody } from '../schemas/api-schemas.js'
import { Type } from 'typebox'
import { callerOf } from '../root-key-auth.js'

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
      const api = await createApi(deps, callerOf(request), request.body.name)
      return { apiId: api.id, name: api.name }
    },
  )
}
