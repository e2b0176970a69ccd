import { ApiError } from '../../../shared/errors.js'
import type { Caller } from '../../caller.js'
import { actorOf } from '../../audit-log.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { actOnLeak, type LeakReport } from '../../leaks/act-on-leak.js'
import type { LeakPolicy } from '../../../shared/leak.js'
import { requireKeyPermission } from '../../root-key-auth.js'

// One answer for a key that does not exist and for one the root key may not act on (whoami's rule).
const HIDDEN_AS = { record: 'key', message: 'key not found' } as const

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
      allowed: (record) => {
        try {
          requireKeyPermission(caller.principal, record, 'report_leak')
        } catch (err) {
          if (!(err instanceof ApiError)) throw err
          throw new ApiError(err.code, err.message, undefined, { hiddenAs: HIDDEN_AS })
        }
      },
    },
    report,
  )
  deps.leakMetrics.token('rootkey', verdict)
  if (verdict.label === 'false_positive') {
    throw new ApiError('NOT_FOUND', 'no key matches', undefined, { record: 'key', hiddenAs: HIDDEN_AS })
  }
  return { keyId: verdict.keyId, apiId: verdict.apiId, action: verdict.action }
}
