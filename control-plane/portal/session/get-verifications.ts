import { ANALYTICS_RETENTION_MS } from '../../../shared/analytics.js'
import type { UsageBucket } from '../../../shared/portal-answers.js'
import { invalid } from '../../../shared/errors/errors.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { verificationReport, type Slice } from '../../analytics/verification-report.js'
import { requireSessionKey, sessionKeys } from './session-keys.js'

/** Windows up to this long are answered by the hour; longer ones by the day. */
const HOURLY_UP_TO_MS = 7 * 86_400_000

/**
 * The customer's verification counts over [startTime, endTime), zero-filled, oldest first: of one of their keys, or
 * of all of them in the session's apis. Needs analytics:read (403). The window must be within the counts' retention
 * (400); the bucket is the hour, or the day for windows over a week.
 */
export async function getPortalVerifications(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
  input: { startTime: number; endTime: number; keyId?: string | undefined },
): Promise<UsageBucket[]> {
  requireScope(caller.session.scopes, 'analytics:read')
  if (input.startTime >= input.endTime) throw invalid('startTime', 'must be before endTime')
  if (input.endTime - input.startTime > ANALYTICS_RETENTION_MS)
    throw invalid('startTime', `the window may span at most ${ANALYTICS_RETENTION_MS / 86_400_000} days`)
  const keys =
    input.keyId === undefined ? await sessionKeys(deps, caller) : [await requireSessionKey(deps, caller, input.keyId)]
  const slice: Slice = input.endTime - input.startTime <= HOURLY_UP_TO_MS ? 'hour' : 'day'
  const rows = await verificationReport(deps.store.usage, {
    keys,
    start: input.startTime,
    end: input.endTime - 1,
    now: deps.clock.now(),
    slice,
    byKey: false,
    byIdentity: false,
    fill: true,
  })
  return rows.map((row) => ({
    time: row.time ?? input.startTime,
    total: row.total,
    valid: row.valid,
    rateLimited: row.rateLimited,
    insufficientPermissions: 0,
    forbidden: 0,
    disabled: 0,
    expired: 0,
    usageExceeded: row.usageExceeded,
  }))
}
