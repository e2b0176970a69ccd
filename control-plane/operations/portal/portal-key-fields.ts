import type { PortalKeyDefaults } from '../../portal/portal-record.js'
import type { NewKeyFields } from '../../schemas/key-schemas.js'

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
