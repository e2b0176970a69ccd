import type { IdentityRecord } from '../../shared/identity.js'

/** An identity as identities.getIdentity and updateIdentity show it: meta `{}` and ratelimits `[]` when none. */
export function toIdentityResponse(identity: IdentityRecord) {
  return {
    id: identity.id,
    externalId: identity.externalId,
    meta: identity.meta ?? {},
    ratelimits: identity.ratelimits ?? [],
    usageThresholds: identity.usageThresholds,
  }
}
