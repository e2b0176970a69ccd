import { notFound } from '../../shared/errors/errors.js'
import type { KeyContext } from '../../shared/keys/key-context.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireKeyPermission } from '../root-keys/root-key-auth.js'

/** The key `keyId` and what it is granted, if the root key may read it: 404, then 403. */
export async function getKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  keyId: string,
): Promise<{ record: KeyRecord; context: KeyContext }> {
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireKeyPermission(caller.principal, record, 'read_key')
  return { record, context: await deps.rbac.contextOf(record) }
}
