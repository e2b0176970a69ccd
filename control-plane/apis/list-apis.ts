import type { ApiRecord } from '../../shared/keys/records.js'
import { APIS_INDEX } from './apis-index.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from '../index-page.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

/**
 * A page of every api, oldest first, for a root key that may read them all (`api.*.read_api`, as listing identities
 * needs `identity.*.read_identity`): a list filtered by permission would tell a narrower key nothing it needs, and the
 * console opens an api by its id. Apis stored without an index entry (the legacy layout) are not listed.
 */
export async function listApis(
  deps: ControlPlaneDeps,
  caller: Caller,
  page: PageOptions,
): Promise<RecordPage<ApiRecord>> {
  requirePermission(caller.principal, '*', 'read_api')
  return pageThroughIndex(deps.store.entities, APIS_INDEX, page, (apiId) => deps.store.keys.getApi(apiId))
}
