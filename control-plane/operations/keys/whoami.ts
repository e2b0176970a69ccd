import { ApiError } from '../../../shared/errors.js'
import type { KeyContext } from '../../../shared/key-context.js'
import { failsChecksum } from '../../../shared/key-checksum.js'
import { hashKey } from '../../../shared/key-material.js'
import type { KeyRecord } from '../../../shared/records.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { requireKeyPermission } from '../../root-key-auth.js'

// One answer for a key that does not exist and for one the root key may not read, where the wire hides which.
const HIDDEN_AS = { record: 'key', message: 'key not found' } as const

/**
 * The record of the key `key` (the key itself, found by its hash) and what it is granted, if the root key may read
 * it: 404, then 403. Both carry the same hiddenAs, which Unkey's v2 answers as one 404: a root key that may not
 * read the key learns nothing of it, not even that it exists.
 */
export async function whoami(
  deps: ControlPlaneDeps,
  caller: Caller,
  key: string,
): Promise<{ record: KeyRecord; context: KeyContext }> {
  // A key whose checksum does not match exists nowhere: not looked up (shared/key-checksum.ts).
  const record = failsChecksum(key) ? null : await deps.store.keys.getKeyByHash(hashKey(key))
  if (!record) throw new ApiError('NOT_FOUND', 'no key matches', undefined, { record: 'key', hiddenAs: HIDDEN_AS })
  try {
    requireKeyPermission(caller.principal, record, 'read_key')
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    throw new ApiError(err.code, err.message, undefined, { hiddenAs: HIDDEN_AS })
  }
  return { record, context: await deps.rbac.contextOf(record) }
}
