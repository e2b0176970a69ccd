import { notFound } from '../../../shared/errors/errors.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { MAX_CUSTOMER_KEYS, readCustomerKeys, rolledAway, tooManyKeys } from './customer-keys.js'

/** One answer for a key of another customer, of an api outside the session, or none at all (Unkey's words). */
export const portalKeyNotFound = () => notFound('key', 'The specified key was not found.')

/**
 * The key `keyId` if it is the session's customer's, in one of the session's apis; else the 404. A key the portal
 * rolled away whose overlap has ended is gone to the portal (customer-keys.ts): a 404 too.
 */
export async function requireSessionKey(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock'>,
  caller: PortalCaller,
  keyId: string,
): Promise<KeyRecord> {
  const key = await deps.store.keys.getKeyById(keyId)
  if (!key || !ownedBySession(caller, key) || rolledAway(key, deps.clock.now())) throw portalKeyNotFound()
  return key
}

/** Whether a key is the session's to see: its customer's, in one of its apis (of those the portal still reaches). */
export function ownedBySession(caller: PortalCaller, key: KeyRecord): boolean {
  return key.ownerId === caller.session.externalId && sessionApis(caller).includes(key.apiId)
}

/** The session's apis the portal still reaches (an api taken out of the portal is out of every session at once). */
export function sessionApis(caller: PortalCaller): string[] {
  return caller.session.apiIds.filter((apiId) => caller.portal.apiIds.includes(apiId))
}

/**
 * Every key of the session's customer in its apis, oldest first (at most MAX_CUSTOMER_KEYS per api, else a 412: a
 * listing or a usage chart over some of them would look whole).
 */
export async function sessionKeys(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'writes' | 'audit'>,
  caller: PortalCaller,
): Promise<KeyRecord[]> {
  const perApi = await Promise.all(
    sessionApis(caller).map(async (apiId) => {
      const keys: KeyRecord[] = []
      await readCustomerKeys(deps, caller, apiId, (key) => keys.push(key) > MAX_CUSTOMER_KEYS)
      if (keys.length > MAX_CUSTOMER_KEYS) throw tooManyKeys(apiId)
      return keys
    }),
  )
  return perApi.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
