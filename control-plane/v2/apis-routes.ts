import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import { createApi, readApi } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { CreateApiBody } from '../schemas/api-schemas.js'
import { ApiIdField } from '../schemas/fields.js'

/** v2's apis.createApi and apis.getApi (Unkey's V2Apis* schemas). */
export function registerV2ApiRoutes(app: KeygateServer, deps: ControlPlaneDeps): void {
  registerV2(
    app,
    'apis.createApi',
    {
      body: CreateApiBody,
      data: Type.Object({
        apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
      }),
    },
    async (request) => ({ data: { apiId: (await createApi(deps, request, request.body.name)).id } }),
  )
  registerV2(
    app,
    'apis.getApi',
    {
      body: Type.Object({ apiId: ApiIdField() }, { additionalProperties: false }),
      data: Type.Object({
        id: Type.String({ description: "The api's id" }),
        name: Type.String({ description: 'Its name' }),
      }),
    },
    async (request) => {
      const api = await readApi(deps, request, request.body.apiId)
      return { data: { id: api.id, name: api.name } }
    },
  )
}
