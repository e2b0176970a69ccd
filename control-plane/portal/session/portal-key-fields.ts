import { checkedNewKey, checkRefillDayNamed, type NewKey } from '../../keys/key-fields.js'
import type { PortalKeyDefaults } from '../portal-record.js'

/**
 * The fields of a key created through a portal: the portal's defaults, the session's identity, the api and name the
 * customer chose, and nothing else the browser could send.
 */
export function keyFieldsOf(
  defaults: PortalKeyDefaults | undefined,
  chosen: { apiId: string; externalId: string; name?: string | undefined },
  now: number,
): NewKey {
  return {
    apiId: chosen.apiId,
    externalId: chosen.externalId,
    ...(chosen.name !== undefined ? { name: chosen.name } : {}),
    ...(defaults?.credits
      ? {
          remaining: defaults.credits.remaining,
          refill: defaults.credits.refill,
          creditsLowThreshold: defaults.credits.lowThreshold,
        }
      : {}),
    ...(defaults?.ratelimits?.length ? { ratelimits: defaults.ratelimits } : {}),
    ...(defaults?.expiresInMs !== undefined ? { expires: now + defaults.expiresInMs } : {}),
  }
}

/**
 * Checks key defaults as v2's keys.createKey would check them (their credits are v2's: a monthly refill names its
 * day), so that a portal never holds settings that would make every key it creates fail. Nothing is written.
 */
export function checkKeyDefaults(defaults: PortalKeyDefaults | undefined, now: number): void {
  if (!defaults) return
  checkRefillDayNamed(defaults.credits?.refill)
  checkedNewKey(keyFieldsOf(defaults, { apiId: 'api_trial', externalId: 'trial' }, now), now)
}
