import type { KeygateServer } from '../../shared/http/build-server.js'
import { deleteApi } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { ApiIdBody } from '../schemas/api-schemas.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { callerOf } from '../root-key-auth.js'

const Body = ApiIdBody('The api to delete, with every key of it: the `apiId` that apis.createApi returned')

export function registerDeleteApi(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post('/v1/apis.deleteApi', { schema: { body: Body, response: { 200: EmptyResponse } } }, async (request) => {
    await deleteApi(deps, writes, callerOf(request), request.body.apiId)
    return {}
  })
}
