import { ApiError } from '../../../shared/errors/errors.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { readCustomerKeys } from './customer-keys.js'

/**
 * The customer's live keys in `apiId`, counted up to `enough` (the count stops there: nothing beyond it changes the
 * answer). The portal's maximum of keys per customer and api (maxKeysPerIdentity) is counted in live keys: a key that
 * has expired verifies nothing and holds no room (or a customer would fill the portal with the keys that expired), and
 * those the portal rolled away are deleted as they are read (customer-keys.ts). `leaving` is a key that ends at once
 * (a roll without overlap): it holds no room either.
 */
async function liveKeys(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'writes' | 'audit'>,
  caller: PortalCaller,
  apiId: string,
  leaving: string | undefined,
  enough: number,
): Promise<number> {
  const now = deps.clock.now()
  let live = 0
  await readCustomerKeys(deps, caller, apiId, (key) => {
    if (key.id !== leaving && (key.expires === undefined || now < key.expires)) live++
    return live >= enough
  })
  return live
}

const full = (max: number) =>
  new ApiError(
    'PRECONDITION_FAILED',
    `you hold the most keys this portal allows (${max}): revoke one to create another`,
  )

/** Refuses (412) a key more when the customer already holds the portal's maximum in `apiId`. */
export async function requireRoom(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'writes' | 'audit'>,
  caller: PortalCaller,
  apiId: string,
  leaving?: string,
): Promise<void> {
  const max = caller.portal.maxKeysPerIdentity
  if ((await liveKeys(deps, caller, apiId, leaving, max)) >= max) throw full(max)
}

/**
 * Refuses (412) a key just written if the customer now holds more than the maximum: calls made at once each passed
 * requireRoom before any of them wrote. Every call that sees the excess refuses its own key, so the maximum holds on
 * every store and across control planes (at worst all of them refuse, and the customer tries again).
 */
export async function requireWithinRoom(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'writes' | 'audit'>,
  caller: PortalCaller,
  apiId: string,
  leaving?: string,
): Promise<void> {
  const max = caller.portal.maxKeysPerIdentity
  if ((await liveKeys(deps, caller, apiId, leaving, max + 1)) > max) throw full(max)
}
