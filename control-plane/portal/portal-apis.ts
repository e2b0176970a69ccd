import { notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { can } from '../root-keys/root-key-auth.js'

/**
 * Checks the apis a portal is to reach: each must exist and be readable by the root key (404 otherwise, the same
 * for both: a root key without rights on an api learns nothing of it).
 */
export async function checkPortalApis(
  deps: ControlPlaneDeps,
  caller: Caller,
  apiIds: readonly string[],
): Promise<void> {
  for (const apiId of apiIds) {
    if (!can(caller.principal, apiId, 'read_api') || !(await deps.store.keys.getApi(apiId)))
      throw notFound('api', `api ${apiId} not found`)
  }
}
