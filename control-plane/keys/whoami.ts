import { ApiError, concealing, type RecordRef } from '../../shared/errors/errors.js'
import type { KeyContext } from '../../shared/keys/key-context.js'
import { failsChecksum } from '../../shared/keys/key-checksum.js'
import { hashKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireKeyPermission } from '../root-keys/root-key-auth.js'

// One answer for a key that does not exist and for one the root key may not read, where the wire hides which.
const THE_KEY: RecordRef = { record: 'key' }

/**
 * The record of the key `key` (the key itself, found by its hash) and what it is granted, if the root key may read
 * it: 404, then 403. Both conceal the key, which Unkey's v2 answers as one 404: a root key that may not read the
 * key learns nothing of it, not even that it exists.
 */
export async function whoami(
  deps: ControlPlaneDeps,
  caller: Caller,
  key: string,
): Promise<{ record: KeyRecord; context: KeyContext }> {
  // A key whose checksum does not match exists nowhere: not looked up (shared/keys/key-checksum.ts).
  const record = failsChecksum(key) ? null : await deps.store.keys.getKeyByHash(hashKey(key))
  if (!record) throw new ApiError('NOT_FOUND', 'no key matches', undefined, { record: 'key', conceals: THE_KEY })
  concealing(THE_KEY, () => requireKeyPermission(caller.principal, record, 'read_key'))
  return { record, context: await deps.rbac.contextOf(record) }
}
