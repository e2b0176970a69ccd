import { lastRefillBoundary } from '../../../shared/keys/credits.js'
import { invalid, notFound } from '../../../shared/errors/errors.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { requireKeyPermission } from '../../root-keys/root-key-auth.js'

export type CreditChange = 'increment' | 'decrement' | 'set'

/** A change of a key's balance: `op` by `value` (null, with `set`: no credits, no limit). */
export interface UpdateCreditsInput {
  keyId: string
  op: CreditChange
  value: number | null
}

/**
 * Changes a key's credit balance atomically (decrement stops at 0, the total at 1e12), after any refill that is
 * due, so the refill can never undo it later. As in Unkey, `set` also gives credits to a key without them (or,
 * with null, takes them away): that changes the key's record, so it is a write verifiers hear of. 404, then 403,
 * then 400 for a change the key's balance cannot take (about the field `op`).
 * Returns the key as it was and the balance now (null: no credits, no limit).
 */
export async function updateCredits(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateCreditsInput,
): Promise<{ before: KeyRecord; remaining: number | null }> {
  const principal = caller.principal
  const { keyId, op, value } = input
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireKeyPermission(principal, record, 'update_key')
  const now = deps.clock.now()
  const refill = record.refill && { boundary: lastRefillBoundary(record.refill, now), amount: record.refill.amount }
  // null: the key carries no credits (or value is null), so the balance alone cannot change.
  const notice = { keyId, apiId: record.apiId, lowThreshold: record.creditsLowThreshold }
  let remaining = value === null ? null : await deps.store.keys.updateCredits(keyId, op, value, refill, now, notice)
  if (remaining === null) {
    if (op !== 'set') {
      throw value === null
        ? invalid('value', `cannot ${op} by null`)
        : invalid('op', `the key carries no credits (no limit) to ${op}; 'set' a value instead`)
    }
    await deps.writes.updateKey(keyId, { remaining: value }, (current) =>
      requireKeyPermission(principal, current, 'update_key'),
    )
    remaining = value
  }
  caller.log.info({ keyId, op, value, remaining, rootKeyId: principal.rootKeyId }, 'key credits updated')
  await deps.audit.record(caller, 'keys.updateRemaining', {
    apiId: record.apiId,
    keyId,
    before: { remaining: record.remaining },
    after: { op, value, remaining },
  })
  return { before: record, remaining }
}
