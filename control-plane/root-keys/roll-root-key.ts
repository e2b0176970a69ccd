import type { RootKeyRecord } from '../../shared/keys/records.js'
import { actorOf } from '../audit/audit-log.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireRootKeyManagement } from './root-key-auth.js'
import type { NewRootKey } from './root-keys.js'

/**
 * A new root key with the same name and permissions as root key `rootKeyId`, and that one revoked at once, in one
 * step: rootkey.*.manage (403), the root key (404), every one of its permissions (403). No grace period: a roll is for
 * a root key that may have leaked, and a leaked key must stop now; for a rotation without downtime, create a second
 * root key, move to it, then revoke the first.
 */
export async function rollRootKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  rootKeyId: string,
): Promise<NewRootKey & { revoked: RootKeyRecord }> {
  const { principal } = caller
  requireRootKeyManagement(principal)
  const target = await deps.rootKeys.get(rootKeyId)
  requireRootKeyManagement(principal, target.permissions)
  const rolled = await deps.rootKeys.roll(actorOf(caller), target.id)
  caller.log.info(
    { revokedRootKeyId: target.id, newRootKeyId: rolled.record.id, rootKeyId: principal.rootKeyId },
    'root key rolled',
  )
  return rolled
}
