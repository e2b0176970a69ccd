import { invalid } from '../shared/errors.js'

/**
 * Keygate's threshold for the webhook event `key.credits.low` watches a balance, so it needs one: refused (400) on a
 * key that carries no credits, or loses them in the same call. `field` is the wire's name for it (v1's
 * `creditsLowThreshold`, v2's `credits.lowThreshold`); null and absent need nothing.
 */
export function checkCreditsLowThreshold(
  threshold: number | null | undefined,
  hasCredits: boolean,
  field: string,
): void {
  if (threshold === null || threshold === undefined || hasCredits) return
  throw invalid(field, 'only for a key with credits (remaining): a key without them has no balance to watch')
}
