import { invalid } from '../../../shared/errors.js'
import { PORTAL_MAX_OVERLAP_MS } from '../../../shared/portal/portal.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from '../../portal/portal-caller.js'
import { requireScope } from '../../portal/portal-scopes.js'
import { replaceKey } from '../keys/reroll-key.js'
import { requireRoom, requireWithinRoom } from './key-room.js'
import { portalActor } from './portal-actor.js'
import { requireSessionKey } from './session-keys.js'

/**
 * Rolls one of the customer's keys: a new key with its settings, the old one working for `expiration` ms more (at most
 * PORTAL_MAX_OVERLAP_MS). Needs keys:reroll, checked before the key is looked up (403 whether or not the key is the
 * customer's); a key that is not theirs is as one that does not exist (404). A roll with an overlap counts toward the
 * portal's maximum of keys (412 at it), or rolling one key again and again would hold any number at once. A roll
 * without one deletes the old key, as revoking does: an expired copy left behind per roll would pile up in the
 * customer's listings and counts until they passed the cap on keys read per listing (keys-in-scope.ts) and every call
 * of the portal was refused. The new key is as long as the portal's keyDefaults make new keys.
 */
export async function rerollPortalKey(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
  input: { keyId: string; expiration: number },
): Promise<{ keyId: string; key: string }> {
  requireScope(caller.session.scopes, 'keys:reroll')
  if (input.expiration > PORTAL_MAX_OVERLAP_MS)
    throw invalid('expiration', `at most ${PORTAL_MAX_OVERLAP_MS} ms (7 days) in the portal`)
  const old = await requireSessionKey(deps, caller, input.keyId)
  // With an overlap the customer holds one key more until it ends: the portal's maximum applies as to a new key.
  const leaving = input.expiration === 0 ? old.id : undefined
  await requireRoom(deps, caller, old.apiId, leaving)
  const { created, key, graceEnds } = await replaceKey(deps, old, {
    expiration: input.expiration,
    byteLength: caller.portal.keyDefaults?.byteLength,
    admit: () => requireWithinRoom(deps, caller, old.apiId, leaving),
    deleteOld: input.expiration === 0,
  })
  caller.log.info({ keyId: old.id, newKeyId: created.id, graceMs: input.expiration }, 'key rerolled in the portal')
  await deps.audit.append(portalActor(caller), 'portal.rerollKey', {
    apiId: old.apiId,
    keyId: old.id,
    before: old,
    after:
      input.expiration === 0
        ? { newKeyId: created.id, oldKeyDeleted: true }
        : { newKeyId: created.id, oldKeyExpires: graceEnds },
  })
  return { keyId: created.id, key }
}
