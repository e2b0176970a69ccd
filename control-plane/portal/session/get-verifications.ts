import type { UsageBucket } from '../../../shared/portal-answers.js'
import { invalid } from '../../../shared/errors/errors.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { HOURS_KEPT_MS, reportEngine, usageReport, type Slice } from '../../analytics/usage-report.js'
import { sessionApis } from './session-keys.js'

/** Windows up to this long are answered by the hour; longer ones by the day. */
const HOURLY_UP_TO_MS = 7 * 86_400_000
/** The longest window: the daily rollup's retention. */
export const MAX_WINDOW_DAYS = 365
/** Keys one call may name. */
export const MAX_KEY_IDS = 100

export interface PortalVerificationsInput {
  startTime: number
  endTime: number
  /** Only these of the customer's keys (deleted ones too: their past verifications stay the customer's). */
  keyIds?: readonly string[] | undefined
  /** A row per key and bucket instead of one per bucket. */
  perKey?: boolean | undefined
}

/**
 * The customer's verification counts over [startTime, endTime), by outcome, oldest first, from the analytics engine:
 * every verification that resolved to the session's externalId in the session's apis — of one of their keys, of some,
 * or of all of them, deleted keys included. Zero-filled unless per key. Needs analytics:read (403). The window must
 * be within the daily counts' retention (400); the bucket is the hour, or the day for windows over a week or older
 * than the hours kept. A key
 * named that is not the customer's has no rows of theirs: it counts nothing, as one that does not exist.
 */
export async function getPortalVerifications(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
  input: PortalVerificationsInput,
): Promise<UsageBucket[]> {
  requireScope(caller.session.scopes, 'analytics:read')
  if (input.startTime >= input.endTime) throw invalid('startTime', 'must be before endTime')
  if (input.endTime - input.startTime > MAX_WINDOW_DAYS * 86_400_000)
    throw invalid('startTime', `the window may span at most ${MAX_WINDOW_DAYS} days`)
  // By the hour only where hours are kept: a short window further back than that is read by the day.
  const hourly =
    input.endTime - input.startTime <= HOURLY_UP_TO_MS && input.startTime >= deps.clock.now() - HOURS_KEPT_MS
  const slice: Slice = hourly ? 'hour' : 'day'
  const rows = await usageReport(
    reportEngine(deps.analytics),
    {
      apiIds: sessionApis(caller),
      externalId: caller.session.externalId,
      keyIds: input.keyIds === undefined ? undefined : [...new Set(input.keyIds)],
      start: input.startTime,
      end: input.endTime - 1,
      slice,
      byKey: input.perKey === true,
      fill: input.perKey !== true,
    },
    deps.clock.now(),
  )
  return rows.map((row) => ({
    time: row.time ?? input.startTime,
    ...(row.keyId === undefined ? {} : { keyId: row.keyId }),
    total: row.total,
    valid: row.valid,
    rateLimited: row.rateLimited,
    insufficientPermissions: row.insufficientPermissions,
    forbidden: row.forbidden,
    disabled: row.disabled,
    expired: row.expired,
    usageExceeded: row.usageExceeded,
    spentCredits: row.spentCredits,
  }))
}
