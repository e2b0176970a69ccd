import { ApiError, concealing, type RecordRef } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import { actorOf } from '../audit/audit-log.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { actOnLeak, type LeakReport } from './act-on-leak.js'
import type { LeakPolicy } from '../../shared/leak.js'
import { requireKeyPermission } from '../root-keys/root-key-auth.js'

// One answer for a key that does not exist and for one the root key may not act on (whoami's rule).
const THE_KEY: RecordRef = { record: 'key' }

/**
 * Reports the key `report.key` leaked, for scanners other than GitHub's: acted on as a GitHub report is (the api's
 * policy), with the root key as reporter. Needs `report_leak` on the key's api; a root key without it learns nothing
 * of the key (404, as for a key that does not exist).
 */
export async function reportLeak(
  deps: ControlPlaneDeps,
  caller: Caller,
  report: LeakReport,
): Promise<{ keyId: string; apiId: string; action: LeakPolicy }> {
  const verdict = await actOnLeak(
    deps,
    {
      actor: actorOf(caller),
      name: `rootkey:${caller.principal.rootKeyId}`,
      log: caller.log,
      allowed: (record) => concealing(THE_KEY, () => requireKeyPermission(caller.principal, record, 'report_leak')),
    },
    report,
  )
  deps.leakMetrics.token('rootkey', verdict)
  if (verdict.label === 'false_positive') {
    throw new ApiError('NOT_FOUND', 'no key matches', undefined, { record: 'key', conceals: THE_KEY })
  }
  return { keyId: verdict.keyId, apiId: verdict.apiId, action: verdict.action }
}
