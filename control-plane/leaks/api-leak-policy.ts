import { apiSettingsAddress, type ApiSettings } from '../../shared/api-settings.js'
import { DEFAULT_LEAK_POLICY, type LeakPolicy } from '../../shared/leak.js'
import type { EntityReader } from '../../shared/store/entities/entity-store.js'

/**
 * What a leak report does to a key of `apiId`: the api's policy, or `disable` when it sets none. One read of the
 * store: the policy is the control plane's to apply (verifiers never read it).
 */
export async function apiLeakPolicy(deps: { store: { entities: EntityReader } }, apiId: string): Promise<LeakPolicy> {
  const stored = await deps.store.entities.getEntity<ApiSettings>(apiSettingsAddress(apiId))
  return stored?.doc.leakPolicy ?? DEFAULT_LEAK_POLICY
}
