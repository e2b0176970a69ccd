import { actorOf } from '../audit/audit-log.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireRootKeyManagement } from './root-key-auth.js'

/**
 * Revokes root key `rootKeyId`: refused by every control plane from the next call on (each call looks its root key up
 * in the store). Any root key may revoke itself; another one takes rootkey.*.manage (403), then the root key must
 * exist (404), then the caller must hold every one of its permissions (403).
 */
export async function revokeRootKey(deps: ControlPlaneDeps, caller: Caller, rootKeyId: string): Promise<void> {
  const { principal } = caller
  const itself = rootKeyId === principal.rootKeyId
  if (!itself) requireRootKeyManagement(principal)
  const target = await deps.rootKeys.get(rootKeyId)
  if (!itself) requireRootKeyManagement(principal, target.permissions)
  await deps.rootKeys.revoke(actorOf(caller), rootKeyId)
  caller.log.info({ revokedRootKeyId: rootKeyId, rootKeyId: principal.rootKeyId }, 'root key revoked')
}
