import { ApiError } from '../../../shared/errors.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { keysInScope } from '../../keys-in-scope.js'
import type { PortalCaller } from '../../portal/portal-caller.js'

/**
 * The portal's maximum of keys per customer and api (maxKeysPerIdentity), counted in live keys: a key that has expired
 * verifies nothing and holds no room (or a customer would fill the portal with the old keys their rolls leave).
 * `leaving` is a key that ends at once (a roll without overlap): it holds no room either.
 */
async function liveKeys(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock'>,
  caller: PortalCaller,
  apiId: string,
  leaving: string | undefined,
): Promise<number> {
  const now = deps.clock.now()
  const keys = await keysInScope(deps.store.keys, apiId, caller.session.externalId)
  return keys.filter((key) => key.id !== leaving && (key.expires === undefined || now < key.expires)).length
}

const full = (max: number) =>
  new ApiError(
    'PRECONDITION_FAILED',
    `you hold the most keys this portal allows (${max}): revoke one to create another`,
  )

/** Refuses (412) a key more when the customer already holds the portal's maximum in `apiId`. */
export async function requireRoom(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock'>,
  caller: PortalCaller,
  apiId: string,
  leaving?: string,
): Promise<void> {
  const max = caller.portal.maxKeysPerIdentity
  if ((await liveKeys(deps, caller, apiId, leaving)) >= max) throw full(max)
}

/**
 * Refuses (412) a key just written if the customer now holds more than the maximum: calls made at once each passed
 * requireRoom before any of them wrote. Every call that sees the excess refuses its own key, so the maximum holds on
 * every store and across control planes (at worst all of them refuse, and the customer tries again).
 */
export async function requireWithinRoom(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock'>,
  caller: PortalCaller,
  apiId: string,
  leaving?: string,
): Promise<void> {
  const max = caller.portal.maxKeysPerIdentity
  if ((await liveKeys(deps, caller, apiId, leaving)) > max) throw full(max)
}
