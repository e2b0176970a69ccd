import type { Refill } from '../../shared/credits.js'
import { invalid } from '../../shared/errors.js'

/**
 * v2's rules on `credits` (Unkey's, in its field names): a refill needs a balance to refill, a monthly refill its
 * day, and a daily one none. `hasCredits`: whether the key carries credits already (updateKey).
 */
export function checkCredits(
  credits: { remaining?: number | null; refill?: Refill | null } | null | undefined,
  hasCredits: boolean,
): void {
  const refill = credits?.refill
  if (!refill) return
  if (credits.remaining === null || (credits.remaining === undefined && !hasCredits)) {
    throw invalid('credits.remaining', 'must be given (not null) when credits.refill is set')
  }
  if (refill.interval === 'monthly' && refill.refillDay === undefined) {
    throw invalid('credits.refill.refillDay', 'must be given when the refill interval is monthly')
  }
  if (refill.interval === 'daily' && refill.refillDay !== undefined) {
    throw invalid('credits.refill.refillDay', 'must not be given when the refill interval is daily')
  }
}
