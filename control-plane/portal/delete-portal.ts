import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePortal } from './session/portal-access.js'

/**
 * Deletes a portal. Its sessions end with it: each call reads the portal, and finds none (401). The keys its
 * customers made stay: they are keys of the apis, which the operator manages as any other.
 */
export async function deletePortal(deps: ControlPlaneDeps, caller: Caller, named: string): Promise<void> {
  const portal = await requirePortal(deps, caller, named, 'delete_portal')
  await deps.portals.delete(portal.id)
  caller.log.info({ portalId: portal.id, rootKeyId: caller.principal.rootKeyId }, 'portal deleted')
  await deps.audit.record(caller, 'portal.deletePortal', { before: { ...portal } })
}
