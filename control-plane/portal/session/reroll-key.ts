import { ApiError, invalid } from '../../../shared/errors/errors.js'
import { PORTAL_MAX_OVERLAP_MS } from '../../../shared/portal/portal.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { replaceKey } from '../../keys/replace-key.js'
import { requireRoom, requireWithinRoom } from './key-room.js'
import { portalActor } from './portal-actor.js'
import { claimForRoll, releaseClaim } from './roll-claim.js'
import { portalKeyNotFound, requireSessionKey } from './session-keys.js'

/**
 * Rolls one of the customer's keys: a new key with its settings, the old one working for `expiration` ms more (at most
 * PORTAL_MAX_OVERLAP_MS). Needs keys:reroll, checked before the key is looked up (403 whether or not the key is the
 * customer's); a key that is not theirs is as one that does not exist (404). A roll with an overlap counts toward the
 * portal's maximum of keys (412 at it), or rolling one key again and again would hold any number at once. The new key
 * is as long as the portal's keyDefaults make new keys.
 *
 * The roll claims the old key before it moves anything (roll-claim.ts): of rolls of one key at once, one wins, and a
 * key already rolled is not rolled again (409). Without an overlap the old key is deleted, as revoking does; with one,
 * the portal deletes it once the overlap has ended (customer-keys.ts). Either way no key a customer once held piles up
 * in their listings and counts. A roll whose old key is revoked meanwhile, or that fails half-way, is undone: the new
 * key deleted, the credits back on the old key (404 for the revoked key).
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
  const replaced = await replaceKey(deps, old, {
    expiration: input.expiration,
    byteLength: caller.portal.keyDefaults?.byteLength,
    admit: async (created) => {
      await requireWithinRoom(deps, caller, old.apiId, leaving)
      await claimForRoll(deps, old.id, created.id)
    },
    release: (created) => releaseClaim(deps, old.id, created.id),
    deleteOld: input.expiration === 0,
  }).catch((err: unknown) => {
    throw err instanceof ApiError && err.details?.record === 'key' ? portalKeyNotFound() : err
  })
  const { created, key, graceEnds } = replaced
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
