import { notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireKeyPermission } from '../root-keys/root-key-auth.js'

/** Deletes the key `keyId` (404, then 403): it stops verifying at once, on every verifier within the bound. */
export async function deleteKey(deps: ControlPlaneDeps, caller: Caller, keyId: string): Promise<void> {
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireKeyPermission(caller.principal, record, 'delete_key')
  if (!(await deps.writes.deleteKey(keyId))) throw notFound('key', `key ${keyId} not found`)
  caller.log.info({ keyId, rootKeyId: caller.principal.rootKeyId }, 'key deleted')
  await deps.audit.record(caller, 'keys.deleteKey', { apiId: record.apiId, keyId, before: record })
}
