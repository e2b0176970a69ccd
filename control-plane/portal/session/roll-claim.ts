import { ApiError } from '../../../shared/errors/errors.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'

const rolledAlready = () =>
  new ApiError('CONFLICT', 'this key was rolled already: roll the key that replaced it, or revoke this one')

/**
 * A portal roll's claim on the key it rolls: `replacedBy`, naming the new key, written (compare-and-set on the key's
 * revision) once the new key exists and before anything else of the old one changes. Of rolls of one key made at
 * once, one claims it and goes on to move its credits; the others are undone (409). A key is rolled once: one whose
 * claim names a key that still exists was replaced by it, and a second roll would leave two live keys from one. A
 * claim naming a key that is gone (its roll was undone, or the new key revoked) holds nothing. 404 if the key is gone.
 */
export async function claimForRoll(
  deps: Pick<ControlPlaneDeps, 'store' | 'writes'>,
  keyId: string,
  into: string,
): Promise<void> {
  await deps.writes.updateKey(keyId, { replacedBy: into }, async (current) => {
    const claimed = current.replacedBy
    if (claimed !== undefined && claimed !== into && (await deps.store.keys.getKeyById(claimed))) throw rolledAlready()
  })
}

/** Takes back this roll's claim on the key (its roll failed), if the key still carries it. */
export async function releaseClaim(
  deps: Pick<ControlPlaneDeps, 'store' | 'writes'>,
  keyId: string,
  into: string,
): Promise<void> {
  if ((await deps.store.keys.getKeyById(keyId))?.replacedBy !== into) return
  await deps.writes.updateKey(
    keyId,
    (current) => (current.replacedBy === into ? { replacedBy: null } : {}),
    () => {},
  )
}
