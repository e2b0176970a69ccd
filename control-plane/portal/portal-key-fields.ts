import { hashKey } from '../../shared/key-material.js'
import { newKeyRecord } from '../new-key-record.js'
import { checkV2KeyInput } from '../v2/credit-rules.js'
import type { PortalKeyDefaults } from './portal-record.js'
import type { NewKeyFields } from '../schemas/key-schemas.js'

/**
 * The fields of a key created through a portal: the portal's defaults, the session's identity, the api and name the
 * customer chose, and nothing else the browser could send.
 */
export function keyFieldsOf(
  defaults: PortalKeyDefaults | undefined,
  chosen: { apiId: string; externalId: string; name?: string | undefined },
  now: number,
): NewKeyFields {
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
 * Checks key defaults as keys.createKey would check them, so that a portal never holds settings that would make every
 * key it creates fail: a trial record is made from them (nothing is written).
 */
export function checkKeyDefaults(defaults: PortalKeyDefaults | undefined, now: number): void {
  if (!defaults) return
  checkV2KeyInput(defaults.credits, false, { ratelimits: defaults.ratelimits })
  newKeyRecord(
    keyFieldsOf(defaults, { apiId: 'api_trial', externalId: 'trial' }, now),
    { hash: hashKey('trial'), start: 'trial' },
    now,
  )
}
