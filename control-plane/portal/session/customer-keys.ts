import { ApiError } from '../../../shared/errors/errors.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { portalActor } from './portal-actor.js'

const PAGE = 100
/** Pages one read of a customer's keys in an api takes at most: the keys a listing shows, and a page more. */
/** A customer's keys per api the portal reads: past it, a listing would look whole and not be. */
export const MAX_CUSTOMER_KEYS = 1_000
const MAX_PAGES = MAX_CUSTOMER_KEYS / PAGE + 1
/** Rolled-away keys one read deletes at most: any beyond wait for a later read, in no listing or count meanwhile. */
const MAX_DELETES = PAGE

/**
 * Whether the portal rolled this key away and its overlap has ended: it can never verify again (short of a root key
 * giving it a new expiry), so the portal deletes it rather than keep it in the customer's listings and counts.
 */
export const rolledAway = (key: KeyRecord, now: number): boolean =>
  key.replacedBy !== undefined && key.expires !== undefined && key.expires <= now

/** The 412 of a customer holding more keys in an api than a portal call reads. */
export const tooManyKeys = (apiId: string) =>
  new ApiError(
    'PRECONDITION_FAILED',
    `you hold more than ${MAX_CUSTOMER_KEYS} keys in api ${apiId}, more than the portal reads: ask the service that gave you this portal to remove some`,
  )

/**
 * The customer's keys in `apiId`, oldest first, each given to `visit` until it answers true (it has seen enough). The
 * keys the portal rolled away whose overlap has ended are deleted on the way (as the roll's last step; at most
 * MAX_DELETES a read) and never visited: however often a customer rolls, the keys they held once neither fill their
 * listings nor grow the reads. A read takes at most MAX_PAGES pages of the store: a customer holding more keys than
 * that in the api is refused (412), as a listing of them would be.
 */
export async function readCustomerKeys(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'writes' | 'audit'>,
  caller: PortalCaller,
  apiId: string,
  visit: (key: KeyRecord) => boolean,
): Promise<void> {
  const now = deps.clock.now()
  let deletes = 0
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const read = await deps.store.keys.listKeys(apiId, { cursor, limit: PAGE, ownerId: caller.session.externalId })
    const ended = read.keys.filter((key) => rolledAway(key, now)).slice(0, MAX_DELETES - deletes)
    deletes += ended.length
    await Promise.all(ended.map((key) => deleteRolledAway(deps, caller, key)))
    for (const key of read.keys) if (!rolledAway(key, now) && visit(key)) return
    if (read.cursor === undefined) return
    cursor = read.cursor
  }
  throw tooManyKeys(apiId)
}

async function deleteRolledAway(
  deps: Pick<ControlPlaneDeps, 'writes' | 'audit'>,
  caller: PortalCaller,
  key: KeyRecord,
): Promise<void> {
  // Another call may have deleted it first: then it is that call's to tell.
  if (!(await deps.writes.deleteKey(key.id))) return
  caller.log.info({ keyId: key.id, apiId: key.apiId }, 'rolled-away key deleted in the portal')
  await deps.audit.append(portalActor(caller), 'portal.deleteRolledKey', {
    apiId: key.apiId,
    keyId: key.id,
    before: key,
  })
}
