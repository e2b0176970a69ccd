import { newId } from '../../../shared/ids.js'
import type { ApiRecord } from '../../../shared/records.js'
import { APIS_INDEX } from '../../apis-index.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { requirePermission } from '../../root-key-auth.js'

/** Creates an api named `name` (not unique: an api is known by its id): `api.*.create_api`, then the store. */
export async function createApi(deps: ControlPlaneDeps, caller: Caller, name: string): Promise<ApiRecord> {
  const { principal } = caller
  requirePermission(principal, '*', 'create_api')
  const api = { id: newId('api', deps.clock.now()), name, createdAt: deps.clock.now() }
  await deps.store.entities.addToIndex(APIS_INDEX, api.id)
  await deps.store.keys.createApi(api)
  await deps.audit.record(caller, 'apis.createApi', { apiId: api.id, after: { id: api.id, name: api.name } })
  caller.log.info({ apiId: api.id, rootKeyId: principal.rootKeyId }, 'api created')
  return api
}
