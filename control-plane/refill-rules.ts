import type { Refill } from '../shared/credits.js'
import { badRequest } from '../shared/errors.js'

/** A refill only makes sense on a key that carries credits, and refillDay only for monthly refills. */
export function checkRefill(refill: Refill | null | undefined, hasCredits: boolean): void {
  if (refill === null || refill === undefined) return
  if (!hasCredits) throw badRequest('refill: needs remaining (a key without credits has nothing to refill)')
  if (refill.refillDay !== undefined && refill.interval !== 'monthly')
    throw badRequest('refill.refillDay: only for a monthly refill')
}
