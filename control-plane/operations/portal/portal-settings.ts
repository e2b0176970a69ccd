import { notFound } from '../../../shared/errors.js'
import { hashKey } from '../../../shared/key-material.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { newKeyRecord } from '../../new-key-record.js'
import type { PortalKeyDefaults } from '../../portal/portal-record.js'
import { can } from '../../root-key-auth.js'
import { checkV2KeyInput } from '../../v2/credit-rules.js'
import { keyFieldsOf } from './portal-key-fields.js'

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

/**
 * Checks key defaults as keys.createKey would check them, so that a portal never holds settings that would make every
 * key it creates fail: a trial record is made from them (nothing is written).
 */
export function checkKeyDefaults(defaults: PortalKeyDefaults | undefined, now: number): void {
  if (!defaults) return
  checkV2KeyInput(defaults.credits, false, { ratelimits: defaults.ratelimits })
  newKeyRecord(
    keyFieldsOf(defaults, { apiId: 'api_trial', externalId: 'trial' }, now),
    { hash: hashKey('trial'), start: 'trial' },
    now,
  )
}
