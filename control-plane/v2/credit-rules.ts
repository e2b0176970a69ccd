import type { Refill } from '../../shared/credits.js'
import { invalid } from '../../shared/errors.js'
import { checkCreditsLowThreshold } from '../credits-low-threshold.js'
import { checkMeta } from '../meta-limits.js'
import { namedLimitsOf, type NamedLimitInput } from '../named-limits.js'

/**
 * v2's rules on `credits` (Unkey's, in its field names): a refill needs a balance to refill, a monthly refill its
 * day, and a daily one none; then Keygate's `lowThreshold`, which needs a balance to watch. `hasCredits`: whether
 * the key carries credits already (updateKey).
 */
export function checkCredits(
  credits: { remaining?: number | null; refill?: Refill | null; lowThreshold?: number | null } | null | undefined,
  hasCredits: boolean,
): void {
  if (!credits) return
  const keepsCredits = credits.remaining === undefined ? hasCredits : credits.remaining !== null
  checkRefill(credits.refill, keepsCredits)
  checkCreditsLowThreshold(credits.lowThreshold, keepsCredits, 'credits.lowThreshold')
}

/** Unkey v2's rules on `credits.refill`, for a key that has (or gets) credits or not. */
function checkRefill(refill: Refill | null | undefined, keepsCredits: boolean): void {
  if (!refill) return
  if (!keepsCredits) throw invalid('credits.remaining', 'must be given (not null) when credits.refill is set')
  if (refill.interval === 'monthly' && refill.refillDay === undefined) {
    throw invalid('credits.refill.refillDay', 'must be given when the refill interval is monthly')
  }
  if (refill.interval === 'daily' && refill.refillDay !== undefined) {
    throw invalid('credits.refill.refillDay', 'must not be given when the refill interval is daily')
  }
}

/**
 * v2's rules on a key's input, in the order Unkey's v2 checks them: `credits` (checkCredits), then meta too large and
 * a limit named twice (input rules: 400 on v2), before the rules v1 shares (recoverable's 412, expires, refill,
 * binding an identity). The operation checks meta and the limits again as it makes the record.
 */
export function checkV2KeyInput(
  credits: Parameters<typeof checkCredits>[0],
  hasCredits: boolean,
  fields: { meta?: Record<string, unknown> | null | undefined; ratelimits?: readonly NamedLimitInput[] | undefined },
): void {
  checkCredits(credits, hasCredits)
  checkMeta(fields.meta)
  if (fields.ratelimits) namedLimitsOf(fields.ratelimits)
}
