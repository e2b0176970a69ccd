import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { portalActor } from './portal-actor.js'
import { portalKeyNotFound, requireSessionKey } from './session-keys.js'

/**
 * Revokes one of the customer's keys: it is deleted, and stops verifying on every verifier within the revocation
 * bound. Needs keys:revoke (403, before the key is looked up); another customer's key is a 404.
 */
export async function revokePortalKey(deps: ControlPlaneDeps, caller: PortalCaller, keyId: string): Promise<void> {
  requireScope(caller.session.scopes, 'keys:revoke')
  const key = await requireSessionKey(deps, caller, keyId)
  if (!(await deps.writes.deleteKey(keyId))) throw portalKeyNotFound()
  caller.log.info({ keyId, apiId: key.apiId }, 'key revoked in the portal')
  await deps.audit.append(portalActor(caller), 'portal.revokeKey', { apiId: key.apiId, keyId, before: key })
}
