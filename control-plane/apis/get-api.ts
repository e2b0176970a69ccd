import type { ApiSettings } from '../../shared/api-settings.js'
import { notFound } from '../../shared/errors/errors.js'
import type { ApiRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

/** The api `apiId` and its settings, if the root key may read it (403, then 404). */
export async function getApi(
  deps: ControlPlaneDeps,
  caller: Caller,
  apiId: string,
): Promise<{ api: ApiRecord; settings: ApiSettings }> {
  requirePermission(caller.principal, apiId, 'read_api')
  const api = await deps.store.keys.getApi(apiId)
  if (!api) throw notFound('api', `api ${apiId} not found`)
  return { api, settings: await deps.apiSettings.of(apiId) }
}
