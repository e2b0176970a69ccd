import { notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

/** Deletes every key of the api `apiId` and keeps the api (403, then 404); answers how many keys were deleted. */
export async function deleteKeys(deps: ControlPlaneDeps, caller: Caller, apiId: string): Promise<number> {
  const { principal } = caller
  requirePermission(principal, apiId, 'delete_key')
  if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  const deletedKeys = await deps.writes.deleteAllKeys(apiId)
  await deps.audit.record(caller, 'apis.deleteKeys', { apiId, after: { deletedKeys } })
  caller.log.info({ apiId, deletedKeys, rootKeyId: principal.rootKeyId }, 'api keys deleted')
  return deletedKeys
}
