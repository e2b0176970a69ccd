import type { Refill } from '../shared/credits.js'
import { invalid } from '../shared/errors.js'

/** A refill only makes sense on a key that carries credits, and refillDay only for monthly refills. */
export function checkRefill(refill: Refill | null | undefined, hasCredits: boolean): void {
  if (refill === null || refill === undefined) return
  if (!hasCredits) throw invalid('refill', 'needs remaining (a key without credits has nothing to refill)')
  if (refill.refillDay !== undefined && refill.interval !== 'monthly')
    throw invalid('refill.refillDay', 'only for a monthly refill')
}

/**
 * A monthly refill with its day spelled out (1 when left out), as Unkey stores and answers it; daily ones have none.
 * Applied when a refill is written and when one is shown, so that records stored without the day read the same.
 */
export function withRefillDay<T extends Refill | null | undefined>(refill: T): T {
  if (!refill || refill.interval !== 'monthly' || refill.refillDay !== undefined) return refill
  return { ...refill, refillDay: 1 }
}
