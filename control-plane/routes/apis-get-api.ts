import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { readApi } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { ApiResponse } from '../schemas/api-schemas.js'
import { ApiIdField } from '../schemas/fields.js'
import { WORKSPACE_ID } from '../workspace.js'
import { callerOf } from '../root-key-auth.js'

export function registerGetApi(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/apis.getApi',
    {
      schema: {
        querystring: Type.Object({ apiId: ApiIdField() }),
        response: { 200: ApiResponse },
      },
    },
    async (request) => {
      const api = await readApi(deps, callerOf(request), request.query.apiId)
      // Exactly Unkey's three fields: its tests hold the body to them.
      return { id: api.id, workspaceId: WORKSPACE_ID, name: api.name }
    },
  )
}
