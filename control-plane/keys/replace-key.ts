import { lastRefillBoundary } from '../../shared/keys/credits.js'
import { notFound } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { UsageThresholdIndex } from '../analytics/usage-threshold-index.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

/**
 * The rotation itself, once the caller may do it: a new key with the old one's settings (its prefix unless `prefix`
 * is given), the old key's credits moved to it, and the old key expiring `expiration` ms from now (or sooner, if it
 * already did), or deleted when `deleteOld` says so. The portal's rerollKey shares it. `admit`, when given, runs once
 * the new key is written and before anything of the old one changes (the portal claims the old key there). From then
 * on a step that fails (the old key gone meanwhile: a 404; the store) undoes the roll: the new key is deleted, the
 * credits go back to the old key, `release` takes back what `admit` wrote, and the old key is as it was.
 */
export async function replaceKey(
  deps: ControlPlaneDeps,
  old: KeyRecord,
  options: {
    expiration: number
    prefix?: string | undefined
    /** Random bytes of the new key (default 16): the old key's length is not kept. */
    byteLength?: number | undefined
    admit?: ((created: KeyRecord) => Promise<void>) | undefined
    /** Takes back what `admit` wrote of the old key, when a later step fails. */
    release?: ((created: KeyRecord) => Promise<void>) | undefined
    /** The old key is deleted rather than expired (a roll that ends it at once, when nothing should keep it). */
    deleteOld?: boolean | undefined
  },
): Promise<{ created: KeyRecord; key: string; graceEnds: number }> {
  const now = deps.clock.now()
  const prefix = options.prefix ?? (old.start.includes('_') ? old.start.slice(0, old.start.indexOf('_')) : undefined)
  const { key, hash, start } = generateKey(prefix, options.byteLength ?? 16)
  const keyId = old.id
  const { expiration } = options
  // A leak mark is the old key's history, not a setting: the new key has not leaked; nor has it been replaced.
  const {
    rev: _rev,
    id: _id,
    hash: _hash,
    start: _start,
    updatedAt: _updated,
    leaked: _leaked,
    replacedBy: _replacedBy,
    remaining,
    ...settings
  } = old
  const id = newId('key', now)
  // Its usage thresholds come with its settings: listed before the key is written, as every pointer, and again once it
  // is, as the usage alerts may have dropped the member of a key they found missing in between (usage-alerts.ts).
  const thresholdIndex = new UsageThresholdIndex(deps.store.entities)
  await thresholdIndex.beforeWrite({ keyId: id }, settings.usageThresholds)
  // Credits move, they are not copied: the new key starts empty and takes the old key's balance (the old
  // key then has none left for its grace period).
  const created = (
    await deps.writes.createKey({
      ...settings,
      ...(remaining === undefined ? {} : { remaining: 0 }),
      id,
      hash,
      start,
      rerolledFrom: keyId,
      createdAt: now,
    })
  ).record
  try {
    if (created.usageThresholds !== undefined) {
      const thresholdsNow = async () => (await deps.store.keys.getKeyById(id))?.usageThresholds
      await thresholdIndex.afterSetting({ keyId: id }, thresholdsNow)
    }
    await options.admit?.(created)
  } catch (err) {
    await deps.writes.deleteKey(created.id)
    throw err
  }
  let taken = 0
  try {
    if (remaining !== undefined) {
      const refill = old.refill && { boundary: lastRefillBoundary(old.refill, now), amount: old.refill.amount }
      taken = (await deps.store.keys.updateCredits(keyId, 'take', 0, refill, now)) ?? 0
      if (taken > 0) await deps.store.keys.updateCredits(created.id, 'increment', taken, undefined, now)
    }
    const graceEnds = now + expiration
    if (options.deleteOld) {
      // Of a roll and a revoke (or another roll's delete) at once, the delete decides: the loser is undone.
      if (!(await deps.writes.deleteKey(keyId))) throw notFound('key', `key ${keyId} not found`)
    } else {
      await deps.writes.updateKey(
        keyId,
        (current) => ({
          expires: current.expires !== undefined && current.expires < graceEnds ? current.expires : graceEnds,
        }),
        () => {},
      )
    }
    return { created, key, graceEnds }
  } catch (err) {
    await undoRoll(deps, old, created, taken, options.release)
    throw err
  }
}

/**
 * Undoes a roll that failed once admitted: the new key deleted first, and only then its credits given back to the old
 * key (while the new key stands they are its: giving them back first could double them). Each step is tried whatever
 * the others did (the credits only once the new key is gone); one that fails is logged: the roll's own error is what
 * the caller hears.
 */
async function undoRoll(
  deps: ControlPlaneDeps,
  old: KeyRecord,
  created: KeyRecord,
  taken: number,
  release: ((created: KeyRecord) => Promise<void>) | undefined,
): Promise<void> {
  const undo = async (step: string, run: () => Promise<unknown>) => {
    try {
      await run()
      return true
    } catch (err) {
      deps.log.error({ err, keyId: old.id, newKeyId: created.id, step }, 'a failed roll could not be undone')
      return false
    }
  }
  const deleted = await undo('delete the new key', () => deps.writes.deleteKey(created.id))
  if (deleted && taken > 0)
    await undo('give the credits back', () =>
      deps.store.keys.updateCredits(old.id, 'increment', taken, undefined, deps.clock.now()),
    )
  if (release) await undo('release the old key', () => release(created))
}
