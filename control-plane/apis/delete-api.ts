import { APIS_INDEX } from './apis-index.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

/** Deletes the api `apiId` and every key of it (403, then 404): they all stop verifying. */
export async function deleteApi(deps: ControlPlaneDeps, caller: Caller, apiId: string): Promise<void> {
  requirePermission(caller.principal, apiId, 'delete_api')
  await deps.writes.deleteApi(apiId)
  await deps.store.entities.removeFromIndex(APIS_INDEX, apiId)
  await deps.audit.record(caller, 'apis.deleteApi', { apiId })
}
